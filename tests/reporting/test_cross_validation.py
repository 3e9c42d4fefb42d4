"""Coreference by cross-validation (``+sweep=cross_validation task=coref``): every fold of both arms runs as a sweep
job and a second launch redoes none; the report makes the cross-validation table (one row per fold, one over every
held-out document pooled with its paired bootstrap, re-scored from the kept predictions), and its runs join no cell
of Tables 1-3 and no extras, unless they differ in more than their fold."""

import json
import os
import subprocess
import sys

import pandas as pd
from conftest import REPO, SAMPLES, random_bilm

from elmo_core import save_bilm
from reporting import report

ACCEPT = ["data.dir", "data.train_file", "data.dev_file", "task.model", "task.max_training_sentences"]
ACCEPT += ["trainer.max_epochs", "trainer.min_updates", "encoder.options", "encoder.weights"]


def _documents(tmp_path):
    """The tiny coreference fixture's three documents: two as train, one as dev."""
    text = (SAMPLES["coref"] / "coref_tiny.conll").read_text()
    docs = ["#begin document" + d for d in text.split("#begin document")[1:]]
    assert len(docs) == 3
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.conll").write_text("".join(docs[:2]))
    (tmp_path / "data" / "dev.conll").write_text(docs[2])
    return tmp_path / "data"


def _sweep(tmp_path, data, *extra, folds="data.fold=range(3)"):
    cmd = [sys.executable, "run.py", "-m", "+sweep=cross_validation", "task=coref", "profile=quick", "source=local",
           "data.folds=3", folds, f"data.dir={data}", "data.train_file=train.conll", "data.dev_file=dev.conll",
           "task.model.hidden=8", "task.model.ffnn_size=8", "task.model.feature_size=4", "task.model.word_dim=8",
           "task.model.char_filters=4", "task.max_training_sentences=2", "trainer.max_epochs=2",
           "trainer.min_updates=0",
           f"encoder.options={tmp_path / 'o.json'}", f"encoder.weights={tmp_path / 'w.hdf5'}",
           f"cache.dir={tmp_path / 'cache'}", f"runs_root={tmp_path / 'runs'}", "threads=1", *extra]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_folds_run_resume_and_make_their_own_table(tmp_path):
    save_bilm(random_bilm(), tmp_path / "o.json", tmp_path / "w.hdf5")
    data = _documents(tmp_path)
    _sweep(tmp_path, data)
    found = sorted((tmp_path / "runs" / "coref").glob("*/results.json"))
    assert len(found) == 6  # 3 folds x baseline, ELMo
    records = [json.loads(p.read_text()) for p in found]
    assert {(r["config"]["data"]["fold"], r["ablation"]) for r in records} == {
        (f, a) for f in range(3) for a in ("baseline", "elmo")
    }
    assert all(r["best_epoch"] == 2 and len(r["epochs"]) == 2 for r in records)  # the last epoch, never a choice
    dates = [r["date"] for r in records]
    _sweep(tmp_path, data)  # launched again: every job has its record, none is redone
    assert [json.loads(p.read_text())["date"] for p in found] == dates

    out = tmp_path / "tables"
    report.main(["--runs", str(tmp_path / "runs"), "--profile", "quick", *sum([["--accept", k] for k in ACCEPT], []),
                 "--out", str(out)])  # fmt: skip
    table = pd.read_csv(out / "cross_validation.csv", dtype=str, keep_default_na=False)
    assert list(table.fold) == ["0 of 3", "1 of 3", "2 of 3", "all 3 of 3"]
    pooled = table.iloc[-1]
    assert pooled.units == "3"  # every document held out once
    assert pooled["paired bootstrap over units: 95% interval, p"].startswith("[")
    by_fold = {(r["config"]["data"]["fold"], r["ablation"]): r["dev"]["conll_f1"] for r in records}
    for fold in range(3):
        row = table.iloc[fold]
        assert (row.baseline, row.ELMo) == (f"{by_fold[fold, 'baseline']:.2f}", f"{by_fold[fold, 'elmo']:.2f}")
    assert not (out / "table1.md").exists()  # a fold's run fills no cell of Tables 1-3 ...
    assert not (out / "extras.md").exists() or "data.fold" not in (out / "extras.md").read_text()  # ... nor extras
    assert "3 of 3 folds have both arms" in (out / "cross_validation.md").read_text()

    kept = tmp_path / "kept"  # --collect copies the folds' records into a table directory and tables them there
    report.main(["--runs", str(tmp_path / "runs"), "--profile", "quick", *sum([["--accept", k] for k in ACCEPT], []),
                 "--out", str(kept), "--collect"])  # fmt: skip
    assert len(list((kept / "runs" / "coref").glob("*/results.json"))) == 6
    assert "3 of 3 folds have both arms" in (kept / "cross_validation.md").read_text()
    assert not (kept / "extras.md").exists() or "data.fold" not in (kept / "extras.md").read_text()


def test_a_fold_run_that_differs_in_more_than_its_fold_is_listed_apart(tmp_path):
    save_bilm(random_bilm(), tmp_path / "o.json", tmp_path / "w.hdf5")
    _sweep(tmp_path, _documents(tmp_path), "+ablation=elmo", "elmo.dropout=0.1", folds="data.fold=0")
    out = tmp_path / "tables"
    report.main(["--runs", str(tmp_path / "runs"), "--profile", "quick", *sum([["--accept", k] for k in ACCEPT], []),
                 "--out", str(out)])  # fmt: skip
    assert "elmo.dropout=0.1" in (out / "extras.md").read_text()
    assert not (out / "cross_validation.md").exists()


def test_table1s_note_says_whether_the_pooled_gain_is_told_from_zero_and_what_it_rules_out():
    from reporting.cross_validation import pooled_gain_note

    g = {"task": "coref", "seed": 0, "folds": 9, "of": 9, "units": 90, "baseline": 36.0, "elmo": 39.5, "gain": 3.5}
    told = pooled_gain_note({**g, "low": 1.5, "high": 5.25, "p": 0.001})
    assert "over the 90 held-out units of all 9 folds, 36.00 -> 39.50, gain +3.50" in told
    assert "[+1.50, +5.25], p=0.001): distinguishable from zero at 5 %." in told
    untold = pooled_gain_note({**g, "folds": 4, "low": -0.5, "high": 7.0, "p": 0.2})
    assert "units of 4 of 9 folds so far" in untold
    assert untold.endswith("not distinguishable from zero at 5 %, which rules out a gain above +7.00 or below -0.50.")
    assert "distinguishable from zero" in pooled_gain_note({**g, "low": -6.0, "high": -1.0, "p": 0.01})
    assert "not distinguishable" not in pooled_gain_note({**g, "low": -6.0, "high": -1.0, "p": 0.01})


def test_only_last_epoch_fold_runs_join_and_one_record_per_fold_and_arm(tmp_path):
    """A fold run that kept its best dev epoch (the default ``trainer.keep=best_dev``) chose on the fold it holds
    out: it is listed apart, with why. A copy of a fold's record is one cell, not a ``TypeError``."""
    import shutil

    save_bilm(random_bilm(), tmp_path / "o.json", tmp_path / "w.hdf5")
    data = _documents(tmp_path)
    _sweep(tmp_path, data, folds="data.fold=0")
    _sweep(tmp_path, data, "trainer.keep=best_dev", "+ablation=elmo", folds="data.fold=0")
    first = sorted((tmp_path / "runs" / "coref").glob("*/results.json"))[0].parent
    shutil.copytree(first, first.with_name(first.name + "-copy"))
    out = tmp_path / "tables"
    report.main(["--runs", str(tmp_path / "runs"), "--profile", "quick", *sum([["--accept", k] for k in ACCEPT], []),
                 "--out", str(out)])  # fmt: skip
    extras = (out / "extras.md").read_text()
    assert "a cross-validation fold keeps its last epoch" in extras and "'best_dev'" in extras
    assert extras.count("one run per fold, arm and seed") == 1  # the copy, or its original
    table = pd.read_csv(out / "cross_validation.csv", dtype=str, keep_default_na=False)
    assert list(table.fold) == ["0 of 3", "1 of 3", "2 of 3", "all 1 of 3"]
    assert table.iloc[0].baseline != "—" and table.iloc[0].ELMo != "—"
