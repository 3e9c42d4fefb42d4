"""The conformance harness's own logic, without either side running: the table's means, gaps and spreads,
which finished sides are read back, where their dates and commit come from, and the reference's SST
configuration (benchmarks/conformance/)."""

import datetime
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.conformance import compare, report
from tasks.common import conformance as shared
from tasks.coref import conformance as coref_head
from tasks.sst import conformance as sst_head


def _comparison():
    side = {"process_cpu_seconds": 20.0, "epoch_seconds": [10.0, 10.0]}
    return {
        "task": "ner",
        "arm": "elmo",
        "epochs": 2,
        "notes": ["train: the first 10 sentences"],
        "matched": ["batch size 32"],
        "reference": {"0": {**side, "dev": [50.0, 60.0], "command": "ref"}, "1": {**side, "dev": [52.0, 64.0]}},
        "suite": {
            "0": {**side, "dev": [55.0, 63.0], "process_cpu_seconds": 8.0, "command": "suite"},
            "1": {**side, "dev": [53.0, 59.0], "process_cpu_seconds": 12.0},
        },
        "command": "python -m benchmarks.conformance.compare --task ner",
        "hardware": "x86_64, 2 CPUs",
        "dates": ["2026-11-26T00:00:00+00:00", "2026-11-26T01:00:00+00:00"],
        "suite_commit": "abc1234",
    }


def test_the_row_is_each_sides_last_epoch_mean_the_gap_and_the_suites_spread():
    s = report.summary(_comparison())
    assert (s["ref"], s["suite"], s["gap"], s["spread"]) == (62.0, 61.0, -1.0, 4.0)
    assert (s["ref_cpu"], s["suite_cpu"]) == (10.0, 5.0)  # process CPU seconds / seeds / epochs
    row = next(line for line in report.render([_comparison()], "", "f.png").splitlines() if line.startswith("| NER"))
    assert "| 62.00 (60.00, 64.00) | 61.00 (63.00, 59.00) | -1.00 | 4.00 | 10 / 5 | 0.50 |" in row


def _data(limit):
    return {"limit": limit, "notes": [], "suite": {}, "reference": {}}


def test_a_finished_side_is_read_back_only_for_the_same_epochs_and_training_limit(tmp_path):
    done = tmp_path / "suite_elmo_seed0.json"
    done.write_text(json.dumps({"dev": [1.0, 2.0], "process_wall_seconds": 600.0, "limit": 100}))
    assert compare.read_back(done, 2, _data(100), {})["dev"] == [1.0, 2.0]
    assert compare.read_back(done, 3, _data(100), {}) is None
    assert compare.read_back(done, 2, _data(200), {}) is None and compare.read_back(done, 2, _data(None), {}) is None
    assert compare.read_back(tmp_path / "missing.json", 2, _data(100), {}) is None


def test_a_finished_side_is_read_back_only_for_the_same_configuration_and_biLM_contents(tmp_path):
    weights, copy, other = (tmp_path / name for name in ("weights.hdf5", "copy.hdf5", "other.hdf5"))
    weights.write_bytes(b"biLM one")
    copy.write_bytes(b"biLM one")
    other.write_bytes(b"biLM two")
    config = {"train_data_path": "train.gold_conll", "model": {"elmo": {"weight_file": str(weights)}}}
    done = tmp_path / "conformance_run.json"
    done.write_text(json.dumps({"dev": [1.0], "process_wall_seconds": 1.0, "config": config}))
    assert compare.read_back(done, 1, _data(None), {"config": config}) is not None
    moved = {**config, "model": {"elmo": {"weight_file": str(copy)}}}
    assert compare.read_back(done, 1, _data(None), {"config": moved}) is not None  # the same file elsewhere
    assert (
        compare.read_back(done, 1, _data(None), {"config": {**config, "model": {"elmo": {"weight_file": str(other)}}}})
        is None
    )
    assert (
        compare.read_back(done, 1, _data(None), {"config": {**config, "train_data_path": "windows.gold_conll"}}) is None
    )
    assert compare.read_back(done, 1, _data(None), {"command": "python run.py"}) is None  # not stored: not the same


def test_the_coreference_reference_reads_the_suites_training_windows_and_whole_dev_documents(tmp_path, monkeypatch):
    from tasks.coref.reader import read_conll2012_coref
    from tasks.coref.task import windows

    source = tmp_path / "shared" / "coref_litbank"
    source.mkdir(parents=True)
    rows = lambda doc, words, tags: [f"{doc}\t0\t{i}\t{w}\t_\t{t}" for i, (w, t) in enumerate(zip(words, tags))]
    for split in ("train", "dev"):
        lines = []
        for doc in ("a", "b"):
            lines.append(f"#begin document ({doc}); part 0")
            for k in range(3):  # three sentences: windows of 2 cut them 2 + 1
                lines += rows(doc, ["He", "saw", "it"], [f"({k})", "-", f"({k}"[:0] + "-"]) + [""]
            lines += ["#end document", ""]
        (source / f"{split}.conll").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(shared, "SHARED_DATA", tmp_path / "shared")
    monkeypatch.setattr(coref_head, "CorefConfig", lambda: type("C", (), {"max_training_sentences": 2})())
    data = coref_head.prepare(tmp_path / "out", limit=None)
    suite_windows = windows(read_conll2012_coref(str(data["suite"]["data.train_path"]))[0], 2)
    reference, _ = read_conll2012_coref(str(data["reference"]["train"]))
    assert [d["sentences"] for d in reference] == [d["sentences"] for d in suite_windows]
    assert [d["clusters"] for d in reference] == [d["clusters"] for d in suite_windows]
    assert len(reference) == 4 and all(d["clusters"] for d in reference)
    assert data["reference"]["dev"] == data["suite"]["data.dev_path"]
    config, _, _ = coref_head.reference_config(data["reference"], {"options": "o", "weights": "w"}, False, 0, 1)
    assert "max_sentences" in config["dataset_reader"] and "max_sentences" not in config["validation_dataset_reader"]


def test_a_side_written_without_its_dates_is_dated_by_its_file_less_its_wall_time(tmp_path):
    done = tmp_path / "conformance_run.json"
    done.write_text(json.dumps({"dev": [1.0], "process_wall_seconds": 3600.0}))
    end = time.time() - 7200
    os.utime(done, (end, end))
    start, stop = compare.read_back(done, 1, _data(None), {})["dates"]
    start, stop = (datetime.datetime.fromisoformat(d).timestamp() for d in (start, stop))
    assert stop - start == pytest.approx(3600, abs=2) and stop == pytest.approx(end, abs=2)


def test_the_suites_commit_says_when_tracked_files_differ_from_it(tmp_path, monkeypatch):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("a")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    monkeypatch.setattr(compare, "ROOT", tmp_path)
    clean = compare.suite_commit()
    assert clean and "+" not in clean
    (tmp_path / "untracked.txt").write_text("not part of the run's code")
    assert compare.suite_commit() == clean
    (tmp_path / "a.txt").write_text("b")
    assert compare.suite_commit() == clean + "+changes"


def test_an_override_sets_a_nested_key_to_a_json_value():
    config = {"dataset_reader": {"use_subtrees": False}}
    compare.set_dotted(config, "dataset_reader.use_subtrees=true")
    compare.set_dotted(config, 'dataset_reader.granularity="5-class"')
    assert config == {"dataset_reader": {"use_subtrees": True, "granularity": "5-class"}}


def test_the_reference_validates_sst_on_whole_sentences_however_it_trains(tmp_path):
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"lstm": {"projection_dim": 16}}))
    bilm = {"options": options, "weights": tmp_path / "weights.hdf5"}
    config, overrides, _ = sst_head.reference_config({"train": "t", "dev": "d"}, bilm, True, 0, 1)
    compare.set_dotted(config, "dataset_reader.use_subtrees=true")
    assert config["dataset_reader"]["use_subtrees"] and not config["validation_dataset_reader"]["use_subtrees"]
    assert config["model"]["pre_encode_feedforward"]["input_dim"] == 100 + 32
    baseline, _, _ = sst_head.reference_config({"train": "t", "dev": "d"}, bilm, False, 0, 1)
    assert "elmo" not in baseline["model"] and overrides == ["task.phrases_min_tokens=null"]


def test_the_committed_conformance_pages_rebuild_from_their_comparisons(tmp_path):
    """``results/conformance.md`` and ``results/conformance_speed.md`` are what the report makes of the JSON
    comparisons committed beside them (the figures are made again, not compared)."""
    from benchmarks.conformance import report

    results = Path(report.ROOT) / "results"
    speed_title = "Task heads beside their references after the speed changes (AMD EPYC, 2026-11-26 and 27)"
    for page, folder, title in (
        ("conformance.md", results / "conformance", report.TITLE),
        ("conformance_speed.md", results / "conformance" / "speed", speed_title),
    ):
        assert report.main(["--dir", str(folder), "--out", str(tmp_path / page), "--title", title]) == 0
        assert (tmp_path / page).read_text() == (results / page).read_text(), page


def test_the_pages_name_the_biLM_version_each_comparison_read():
    """``small`` is replaced when a biLM ships, so a comparison is tied to its biLM by the weights' SHA-256 and the
    page names the directory that holds those weights now."""
    from benchmarks.conformance import report
    from suite_common.hashing import file_sha256

    third = file_sha256(Path(report.ROOT) / "elmo_core/pretrained/small-v3/weights.hdf5")
    assert report.bilm_versions([{"biLM_weights_sha256": third}] * 2) == (
        "`elmo_core/pretrained/small-v3`, the embedded `small` when the comparisons ran"
    )
    assert "no longer shipped" in report.bilm_versions([{"biLM_weights_sha256": "0" * 64}])
    assert "of the records' dates" in report.bilm_versions([{"biLM_weights_sha256": third}, {}])
