"""Training throughput of the biLM (Peters et al. 2018, §3.1) for the embedded ``small`` preset and
the paper's configuration, on this machine.

    python -m benchmarks.pretrain_speed [--steps 5] [--paper-batch 32] [--device cpu]

Each configuration trains for a few updates on real text (the LM corpus) after one warm-up update,
with the same code as ``elmo_core.pretrain`` (packed streams, adaptive softmax, Adagrad), and
prints tokens/s, seconds per update and peak resident memory.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from benchmarks.bilm_speed import peak_rss_mb, reset_peak_rss
from elmo_core.bilm import BiLM
from elmo_core.lm_data import LMStream, Vocabulary, expand_files
from elmo_core.lm_training import LanguageModel, detach_state
from elmo_core.options import parse_options
from elmo_core.pretrain import PRESETS

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared/data/lm_corpus/train/reuters21578.txt"
SHIPPED_VOCAB = ROOT / "elmo_core/pretrained/small/vocab.txt"


def measure(preset: str, vocab: Vocabulary, files, batch_size: int, unroll: int, steps: int, device: str) -> dict:
    torch.manual_seed(0)
    lm = LanguageModel(BiLM(parse_options(json.loads(json.dumps(PRESETS[preset])))), len(vocab)).to(device).train()
    optimizer = torch.optim.Adagrad(lm.parameters(), lr=0.2, initial_accumulator_value=1.0)
    state = lm.bilm.zero_state(batch_size, device)
    batches = LMStream(files, vocab, batch_size, unroll, seed=0).batches(0)
    reset_peak_rss()
    timings, tokens = [], 0
    for i in range(steps + 1):
        batch = next(batches)
        start = time.perf_counter()
        nll, state = lm(batch, state, device=device)
        count = int((batch.forward_targets >= 0).sum())
        optimizer.zero_grad(set_to_none=True)
        (nll.sum() / (2 * count) * unroll).backward()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), 10.0)
        optimizer.step()
        state = detach_state(state)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if i > 0:  # the first update is warm-up
            timings.append(time.perf_counter() - start)
            tokens += count
    return {"preset": preset, "batch_size": batch_size, "unroll_steps": unroll,
            "parameters": sum(p.numel() for p in lm.parameters()),
            "tokens_per_s": tokens / sum(timings), "seconds_per_update": sum(timings) / len(timings),
            "peak_rss_mb": peak_rss_mb()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--small-batch", type=int, default=128)
    ap.add_argument("--paper-batch", type=int, default=32, help="rows per update for the paper config")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    files = expand_files([str(args.corpus)])
    if SHIPPED_VOCAB.exists():
        vocab, source = Vocabulary.load(SHIPPED_VOCAB), str(SHIPPED_VOCAB)
    else:
        vocab, source = Vocabulary.build(files, 3), f"built from {args.corpus}"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}; "
          f"vocabulary {len(vocab)} words ({source})")
    print(f"{'config':<8}{'params':>10}{'rows x unroll':>15}{'tokens/s':>11}{'s/update':>10}{'peak RSS MB':>13}")
    for preset, batch in (("small", args.small_batch), ("paper", args.paper_batch)):
        r = measure(preset, vocab, files, batch, 20, args.steps, args.device)
        print(f"{preset:<8}{r['parameters'] / 1e6:>9.1f}M{f'{batch} x 20':>15}{r['tokens_per_s']:>11.0f}"
              f"{r['seconds_per_update']:>10.2f}{r['peak_rss_mb']:>13.0f}")


if __name__ == "__main__":
    main()
