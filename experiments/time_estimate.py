"""How long a run would take and how much memory it needs, measured here before it starts
(``mode=dry_run``; the paper-scale projections of every task are ``benchmarks.paper_scale``).

A few updates of the run's real model are timed on a sample of its own training batches, with the
sample's contextual layers computed once by its real encoder (which times the encoder too); the
same model's forward pass times evaluation. The estimate is then: the activation cache entries still
missing (their tokens at the encoder's measured rate) + ``max_epochs`` × (the epoch's updates at
the measured rate + the dev set's forward passes), all times ``MARGIN``, measured against finished
runs (``benchmarks.dry_run_check``). Early stopping (``trainer.patience``) can end the run sooner.
Memory is this process's peak resident size while it ran the timed updates: what the training
process needs (the activation cache is memory-mapped from disk, not held in memory).
Nothing is written.
"""

from __future__ import annotations

import resource
import time

import numpy as np
import torch

from encoders.activation_cache import pad_layers
from tasks.base import TaskSplit

from .trainer import make_optimizer, predict, train_step

COUNTS = {  # what each count a dry run prints means (a task's readers' own: its Task.COUNTS)
    "train_examples": "training examples (after data.fraction)",
    "batches_per_epoch": "training updates per epoch (trainer.batch_size; times the passes of trainer.equal_updates)",
    "max_epochs": "the most epochs the run trains (trainer.max_epochs, raised to reach trainer.min_updates; "
    "it stops after trainer.patience epochs without a better dev score)",
    "sentences": "sentences read",
    "tokens": "tokens read",
}


class _SampleLayers:
    """The layers of a sample's sentences, computed once (a ``LayerSource``)."""

    def __init__(self, per_sentence: list[np.ndarray], shape: tuple[int, int]):
        self.per_sentence, self.shape = per_sentence, shape

    def batch(self, indices):
        return pad_layers([self.per_sentence[i] for i in indices], *self.shape)


def measure(built, batches: list[list[int]], updates: int = 6) -> dict:
    """Time ``updates`` updates (after one untimed) of the run's model (``RunPlan.build``) on training
    batches spread evenly over the epoch's shuffled order (a task whose batches differ in size, as
    coreference's documents do, is not timed on its first few only)."""
    task, splits, encoder, model, t = built.task, built.splits, built.encoder, built.model, built.trainer
    step = max(1, len(batches) // (updates + 1))
    take = [batches[(k * step) % len(batches)] for k in range(updates + 1)]  # a small training set: again
    chosen = sorted({i for b in take for i in b})
    position = {i: k for k, i in enumerate(chosen)}
    sample = task.prepare(splits["train"].select(chosen), "train")
    layers, encoder_rate = None, None
    if built.features.position != "none":
        sentences = task.sentences(sample)
        started = time.perf_counter()
        per_sentence = [None] * len(sentences)
        for i, x in encoder.embed(sentences, None):  # in the encoder's batch order
            per_sentence[i] = x
        seconds = time.perf_counter() - started
        encoder_rate = sum(map(len, sentences)) / max(seconds, 1e-9)
        layers = _SampleLayers(per_sentence, encoder.layer_shape())
    split = TaskSplit("train", sample, layers)
    optimizer = make_optimizer(model, t)
    params = [p for p in model.parameters() if p.requires_grad]
    model.train()
    timed = []
    for k, b in enumerate(take):
        batch = task.make_batch(split, [position[i] for i in b])
        started = time.perf_counter()
        train_step(model, batch, optimizer, t, params)
        if k:  # the first update warms up allocators and kernels
            timed.append(time.perf_counter() - started)
    started = time.perf_counter()
    with torch.no_grad():
        predict(task, model, split, t.eval_batch_size)
    forward_per_example = (time.perf_counter() - started) / len(sample)
    return {
        "seconds_per_update": float(np.mean(timed)) if timed else None,
        "updates_timed": len(timed),
        "forward_seconds_per_example": forward_per_example,
        "encoder_tokens_per_second": encoder_rate,
        "peak_memory_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9,
    }


def duration_text(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.1f} s"


# What the timed updates miss, measured (``benchmarks.dry_run_check``; docs/reproducing.md has the table): the
# quick Table 1 ELMo runs on a 2-core AMD EPYC, two one-thread runs side by side, took up to 1.87 times this
# estimate without it (the epoch's checkpoint and best-model copy, the activation cache read from disk, and
# a busy machine's slower updates). The estimate is multiplied by it so that "at most" holds.
MARGIN = 2.0


def estimate(measured: dict, batches_per_epoch: int, max_epochs: int, dev_examples: int, cache_tokens: int,
             live_tokens_per_epoch: int, finetune: bool = False) -> dict:  # fmt: skip
    """The run's duration from what ``measure`` timed: cache build, and per epoch its updates, its dev
    pass and (without the cache) the encoder's pass over the epoch's text."""
    rate = measured["encoder_tokens_per_second"]
    cache = MARGIN * cache_tokens / rate if rate and cache_tokens else 0.0
    live = live_tokens_per_epoch / rate if rate and live_tokens_per_epoch else 0.0
    epoch = MARGIN * (
        batches_per_epoch * (measured["seconds_per_update"] or 0.0)
        + dev_examples * measured["forward_seconds_per_example"]
        + live
    )
    total = cache + max_epochs * epoch
    return {
        "estimated_duration": f"at most {duration_text(total)} ({max_epochs} epochs of {duration_text(epoch)}"
        + (f", after {duration_text(cache)} building the activation cache" if cache else "")
        + "; early stopping may end it sooner)",
        "estimated_seconds": round(total, 1),
        "cache_seconds": round(cache, 1),
        "how_estimated": f"{measured['updates_timed']} updates of the real model timed on this machine now "
        f"({measured['seconds_per_update']:.3f} s each, threads={torch.get_num_threads()}), times {MARGIN} "
        "(what real runs took beyond the timed updates, measured: docs/reproducing.md)"
        + (f"; the encoder at {rate:,.0f} tokens/s" if rate else "")
        + (
            "; not included: the biLM fine-tuning pass of encoder.finetune=true (benchmarks.paper_scale measures it)"
            if finetune
            else ""
        ),  # fmt: skip
    }
