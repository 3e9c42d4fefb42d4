"""``mode=dry_run``: what a training run would do and whether its cache fits, with nothing written."""

import json
import subprocess
import sys

import pytest
from conftest import REPO, SAMPLES
from run_configs import tiny_ner_cfg, tiny_qa_cfg

from experiments import runner
from experiments.dry_run import dry_run
from experiments.run_config import as_run
from tasks.registry import available


def files_under(path):
    return sorted(p for p in path.rglob("*")) if path.exists() else []


def test_dry_run_says_train_then_skip_and_writes_nothing(bilm_files, tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs"
    cfg = tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input", f"runs_root={runs}")
    report = dry_run(as_run(cfg))
    assert report["would"] == "train" and report["train_examples"] > 0 and report["batches_per_epoch"] >= 1
    assert report["cache"]["fits"] and report["cache"]["bytes_needed"] > 0
    assert report["cache"]["missing"] == ["ner/train"]  # dev is the same file here: one entry
    assert "fits: the activation cache needs" in capsys.readouterr().out
    assert files_under(runs) == [] and files_under(tmp_path / "cache") == []  # nothing built, nothing written
    out = runs / "ner" / "_"
    out.mkdir(parents=True)
    runner.train(as_run(cfg), out)
    from experiments import dry_run as dry_run_module

    def never(*args, **kwargs):
        raise AssertionError("a configuration that would be skipped was timed")

    monkeypatch.setattr(dry_run_module, "measured_once", never)
    again = dry_run(as_run(cfg))  # said first: nothing read, built or timed for it
    assert again["would"].startswith("skip") and again["digest"] == report["digest"]
    assert "train_examples" not in again and "cache" not in again


def test_dry_run_says_when_the_cache_does_not_fit(bilm_files, tmp_path, capsys):
    cfg = tiny_ner_cfg(
        bilm_files, tmp_path, "elmo.position=input", f"runs_root={tmp_path / 'runs'}", "cache.max_gb=0.000001"
    )
    assert not dry_run(as_run(cfg))["cache"]["fits"]
    assert "does NOT fit" in capsys.readouterr().out


def test_dry_run_from_the_command_line_leaves_no_directory(bilm_files, tmp_path):
    """Nothing is written, not even the runs index of a runs root that holds another run's record."""
    from experiments.record import RECORD_VERSION

    o, w = bilm_files
    runs = tmp_path / "runs"
    other = runs / "ner" / "another_run" / "results.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"record_version": RECORD_VERSION, "config": {}, "identity": {}}))
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "mode=dry_run",
            "task=ner",
            f"data.dir={SAMPLES['ner']}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            f"runs_root={runs}",
            "threads=1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"would": "train"' in done.stdout and "fits:" in done.stdout
    assert [p for p in runs.rglob("*") if p.is_file()] == [other] and not (tmp_path / "cache").exists()


def test_dry_run_counts_the_training_batches_the_trainer_makes(bilm_files, tmp_path, capsys):
    """SQuAD's clustered training batches (exactly ``batch_size`` questions) differ from its token-capped
    evaluation batches: the dry run counts the training ones, times the passes per epoch."""
    import random

    from experiments.pipeline import make_task, training_splits
    from experiments.trainer import passes_per_epoch

    sizes = ("trainer.batch_size=3", "task.max_tokens_per_batch=20", "data.fraction=1.0")
    for batching in ("clustered", "token_capped"):
        cfg = tiny_qa_cfg(bilm_files, tmp_path, f"task.batching={batching}", *sizes, f"runs_root={tmp_path / 'runs'}")
        task = make_task(as_run(cfg))
        train = training_splits(as_run(cfg), task)["train"]
        trained = len(task.batches(train, 3, shuffle=True, rng=random.Random(1))) * passes_per_epoch(cfg)
        assert dry_run(as_run(cfg))["batches_per_epoch"] == trained
    clustered = tiny_qa_cfg(bilm_files, tmp_path, "task.batching=clustered", *sizes)
    assert len(task.batches(train, 3, shuffle=False)) != len(
        make_task(as_run(clustered)).batches(train, 3, shuffle=True, rng=random.Random(0))
    ), "the fixture no longer tells the two batchings apart"


def test_dry_run_estimates_the_duration_and_memory_and_explains_its_counts(bilm_files, tmp_path, capsys):
    cfg = tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input", f"runs_root={tmp_path / 'runs'}")
    report = dry_run(as_run(cfg))
    assert report["estimated_duration"].startswith("at most ") and report["estimated_seconds"] > 0
    assert "updates of the real model timed on this machine" in report["how_estimated"]
    assert report["memory_needed"].endswith("GB (this process's peak while timing its updates)")
    counts = ["train_examples", "batches_per_epoch", "max_epochs", *{k for s in report["data"].values() for k in s}]
    assert set(counts) <= set(report["counts_explained"])
    assert files_under(tmp_path / "runs") == [] and files_under(tmp_path / "cache") == []


@pytest.mark.every_task
@pytest.mark.parametrize("name", [n for n in available() if (REPO / "tasks" / n / "reader.py").is_file()])
def test_every_count_a_reader_reports_is_explained(name):
    """The counts a dry run prints come from the readers' statistics: each has its meaning, in the suite's
    ``COUNTS`` or the task's own (``Task.COUNTS``)."""
    import re

    from experiments.time_estimate import COUNTS
    from tasks.registry import task_class

    text = (REPO / "tasks" / name / "reader.py").read_text()
    keys = set(re.findall(r'stats\["(\w+)"\]', text)) | set(re.findall(r'"(\w+)": (?:0|len\(|sum\()', text))
    explained = {*COUNTS, *task_class(name).COUNTS}
    assert keys or "stats" not in text  # a reader that counts is found counting
    assert keys <= explained, sorted(keys - explained)


def test_the_estimate_adds_the_measured_margin_to_what_it_timed():
    """Updates, dev passes and the cache build as timed, times the margin measured against finished runs."""
    from experiments.time_estimate import MARGIN, estimate

    measured = {
        "seconds_per_update": 0.5,
        "updates_timed": 6,
        "forward_seconds_per_example": 0.01,
        "encoder_tokens_per_second": 1000.0,
    }
    out = estimate(measured, batches_per_epoch=10, max_epochs=3, dev_examples=100, cache_tokens=2000,
                   live_tokens_per_epoch=0)  # fmt: skip
    timed = 2000 / 1000 + 3 * (10 * 0.5 + 100 * 0.01)
    assert MARGIN > 1 and out["estimated_seconds"] == round(MARGIN * timed, 1)
    assert out["cache_seconds"] == round(MARGIN * 2.0, 1) and f"times {MARGIN}" in out["how_estimated"]
