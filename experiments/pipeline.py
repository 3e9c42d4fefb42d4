"""A run's pieces before training (Peters et al. 2018 §3.3): its task, its data splits (train cut to
``data.fraction`` for Figure 1), the layers of each split from the encoder (cached or live), and the
ELMo mixes the task model owns. The recipes (``runner``, ``trained_runs``) put them together."""

from __future__ import annotations

import math

import numpy as np

from suite_common.errors import ConfigError
from tasks.base import TaskSplit
from tasks.common.layers import ElmoFeatures
from tasks.registry import task_class

from .run_config import RunConfig, as_run


def make_task(run: RunConfig):
    """The task of a run configuration, built on its typed ``task`` group."""
    run = as_run(run)
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
    run = as_run(run)
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
