"""A run's pieces before training (Peters et al. 2018 §3.3): its task, its data splits (train cut to
``data.fraction`` for Figure 1), the layers of each split from the encoder (cached or live), and the
ELMo mixes the task model owns. The recipes (``runner``, ``trained_runs``) put them together."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from encoders import Encoder
from suite_common.errors import ConfigError
from tasks.base import TaskSplit
from tasks.common.layers import ElmoFeatures
from tasks.registry import task_class

from .run_config import RunConfig


@dataclass
class BuiltRun:
    """What every mode runs on, built from a plan by ``build_run``: the task (its vocabulary and
    labels), its splits (train cut to ``data.fraction``; none for a trained run), the encoder (the
    fine-tuned biLM where the plan reads one), the splits with their layers (when asked), the ELMo
    mixes the model owns, the model (seeded), the run's ``trainer`` group and the device it trains on."""

    task: object
    splits: dict
    encoder: Encoder
    data: dict | None
    features: object
    model: object
    trainer: object  # tasks.common.config.TrainerConfig
    device: str


def make_task(run: RunConfig):
    """The task of a run configuration, built on its typed ``task`` group."""
    return task_class(run.task.name)(run.task)


def build_features(run: RunConfig, encoder) -> ElmoFeatures:
    """The ELMo mixes a task model owns (where ``run.position`` puts them, made as ``run.elmo`` says),
    sized to the encoder's layers."""
    num_layers, dim = encoder.layer_shape()
    elmo = run.elmo
    return ElmoFeatures(
        run.position, num_layers, dim, mix=elmo.mix, dropout=elmo.dropout, layer_norm=elmo.layer_norm, l2=elmo.l2
    )


def subsample(ds, fraction: float):
    """The first ⌈fraction·n⌉ examples of a fixed permutation: smaller fractions are subsets of larger."""
    if not 0 < fraction <= 1:
        raise ConfigError(f"data.fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return ds
    order = np.random.default_rng(12345).permutation(len(ds))
    return ds.select(sorted(order[: max(1, math.ceil(fraction * len(ds)))].tolist()))


def training_splits(run: RunConfig, task) -> dict:
    """The task's splits (train and dev required), train cut to ``data.fraction``."""
    splits = task.load_splits(run.data)
    for required in ("train", "dev"):
        if required not in splits:
            raise ConfigError(f"no {required} split (set data.dir or data.{required}_path)")
    fraction = getattr(run.data, "fraction", 1.0)  # the probes' data have no fraction
    if fraction != 1.0:  # prepare again: per-split row bookkeeping must match the subset
        splits["train"] = task.prepare(subsample(splits["train"], fraction), "train")
    return splits


def with_layers(run: RunConfig, task, splits: dict, encoder) -> dict[str, TaskSplit]:
    """Each split with the layer source of its sentences (none when ELMo is not used). With the
    cache on, the entries still missing are sized first: a run whose cache would not fit
    (``cache.max_gb``, the free disk) stops before it writes any (``check_budget``)."""
    if not run.reads_encoder:
        return {name: TaskSplit(name, ds) for name, ds in splits.items()}
    sentences = {f"{task.name}/{name}": task.sentences(ds) for name, ds in splits.items()}
    encoder.check_budget(sentences)
    return {
        name: TaskSplit(name, ds, encoder.layer_source(sentences[f"{task.name}/{name}"], f"{task.name}/{name}"))
        for name, ds in splits.items()
    }


def task_text(task, ds) -> str:
    return "\n".join(" ".join(s) for s in task.sentences(ds)) + "\n"


def build_run(
    plan, layers: bool = True, finetune: bool = True, task_state: dict | None = None, splits: dict | None = None
) -> BuiltRun:
    """A plan's pieces (``plan.RunPlan``), the one way every mode makes them: task, splits and vocabulary
    (or, with ``task_state``, a trained run's vocabulary and labels), the encoder (fine-tuned on the task's
    text where the plan says so and ``finetune``: a dry run estimates that step instead), the splits' layers
    (``layers``), the mixes and the model (after seeding with the run's seed), the trainer's settings.
    ``splits``: the training splits another plan with the same task and data settings has read already."""
    from .trainer import set_seed

    task = make_task(plan.run)
    if splits is None:
        splits = {}
        if task_state is None or (finetune and plan.finetuned_encoder):
            splits = training_splits(plan.run, task)
    if task_state is None:
        task.build_vocab(splits["train"])
    else:
        task.load_state(task_state)
    encoder = plan.encoder
    if finetune and plan.finetuned_encoder:
        encoder = encoder.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    data = with_layers(plan.run, task, splits, encoder) if layers and task_state is None else None
    set_seed(plan.run.seed)  # the model's initialization; fit seeds the training stream again from the same seed
    features = build_features(plan.run, encoder)
    model = task.build_model(features)
    return BuiltRun(task, splits, encoder, data, features, model, plan.run.trainer, str(plan.run.device))
