"""The units the report's paired bootstrap resamples (``Task.unit_counts``): summed over every unit,
their counts give exactly the corpus metric the task's own ``score`` computes, on the real dev data
with imperfect predictions; span-F1 tasks resample whole sentences (SRL: a sentence's predicates
together)."""

import random

import numpy as np
import pytest
from conftest import shared_path
from run_configs import compose_cfg

from experiments.pipeline import make_task
from experiments.run_config import as_run
from tasks.common.data_files import data_files
from tasks.registry import paper_reference, table_tasks


def dev_split(name):
    cfg = compose_cfg([f"task={name}", "source=local", "profile=quick"])
    dev = data_files(cfg.data)["dev"]
    shared_path(str(dev).split("shared/", 1)[-1])
    task = make_task(as_run(cfg))
    ds, _ = task.read_file(dev, cfg.data, "dev")
    return task, task.prepare(ds, "dev")


def corrupted_tags(seqs, rng, tags):
    return [[rng.choice(tags) if rng.random() < 0.1 else t for t in seq] for seq in seqs]


def predictions_for(ds, rng):
    """Imperfect predictions of the kind the dev split holds: tags, answer spans, clusters or labels."""
    columns = set(ds.column_names)
    if "tags" in columns:
        return corrupted_tags(ds["tags"], rng, sorted({t for seq in ds["tags"] for t in seq}))
    if "offsets" in columns:
        return [
            (i, min(i + rng.randrange(4), len(ex["offsets"]) - 1))
            for ex in ds
            for i in [rng.randrange(len(ex["offsets"]))]
        ]
    if "clusters" in columns:
        return [[c for c in clusters if rng.random() < 0.7] for clusters in ds["clusters"]]
    labels = sorted(set(ds["label"]))
    return [g if rng.random() < 0.6 else rng.choice(labels) for g in ds["label"]]


WITH_SHARED_DATA = [name for name in table_tasks() if paper_reference(name) is not None]


@pytest.mark.parametrize("name", WITH_SHARED_DATA)
def test_unit_counts_sum_to_the_tasks_metric(name):
    task, ds = dev_split(name)
    predictions = predictions_for(ds, random.Random(0))
    metric = task.score(ds, predictions)[task.metric]
    units, counts = task.unit_counts(ds, predictions)
    assert len(units) == counts.shape[0] > 1
    assert 1 < metric < 100  # imperfect predictions: the check is not on a trivial 0 or 100
    assert float(task.metric_of_sums(counts.sum(axis=0))) == pytest.approx(metric, abs=1e-9)
    # where a unit is one example (all but SRL, below), a subset of units is the metric of that subset of
    # examples (what a bootstrap draw computes)
    if len(units) == len(ds):
        keep = list(range(0, len(ds), 2))
        sub = ds.select(keep)
        part = [predictions[i] for i in keep]
        assert float(task.metric_of_sums(counts[keep].sum(axis=0))) == pytest.approx(
            task.score(sub, part)[task.metric], abs=1e-9
        )


def test_srl_units_are_sentences_with_all_their_predicates():
    task, ds = dev_split("srl")
    predictions = corrupted_tags(ds["tags"], random.Random(1), ["O", "B-ARG0"])
    units, counts = task.unit_counts(ds, predictions)
    assert len(units) == len(set(ds["bilm_row"])) < len(ds)  # fewer units than predicates
    first = units[0]
    rows = [i for i, r in enumerate(ds["bilm_row"]) if r == first]
    sub = ds.select(rows)
    from tasks.srl.metric import srl_scores

    s = srl_scores(sub["tags"], [predictions[i] for i in rows])
    c, p, g = counts[0]
    assert g == sum(v["gold"] for v in s["per_role"].values())
    assert float(task.metric_of_sums(np.array([c, p, g]))) == pytest.approx(s["f1"], abs=1e-9)
