"""A table directory belongs to the runs it was built from: a report of other records into it is
refused before anything is written, ``--collect`` adds records without ever replacing one, and
unknown ``--accept`` keys are refused with the valid ones named."""

import shutil
from pathlib import Path

import pytest
from conftest import REPO
from report_records import write_record

from reporting import report
from suite_common.errors import ConfigError


def snapshot(root):
    return {
        p.relative_to(root): (p.read_bytes() if p.suffix != ".png" else b"png") for p in root.rglob("*") if p.is_file()
    }


DIRECTORY = "results/history/paper_small-v2"


@pytest.fixture
def committed_copy(tmp_path, monkeypatch):
    """A committed table directory (the paper profile's second-biLM tables: few records, so quick to rebuild)
    and the conf/ it was built under, copied; its NER records copied apart."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / DIRECTORY, tmp_path / DIRECTORY)
    shutil.copytree(REPO / "conf", tmp_path / "conf")
    monkeypatch.setattr("reporting.cell_rules.CONF", tmp_path / "conf")
    subset = tmp_path / "subset"
    shutil.copytree(tmp_path / DIRECTORY / "runs" / "ner", subset / "ner")
    return tmp_path / DIRECTORY, subset


def test_a_report_of_other_runs_into_a_table_directory_is_refused_and_writes_nothing(committed_copy):
    out, subset = committed_copy
    before = snapshot(out)
    with pytest.raises(
        SystemExit, match=rf"holds the tables of {DIRECTORY}/runs; a report of .*subset needs another --out"
    ):
        report.main(["--runs", str(subset), "--out", DIRECTORY])
    assert snapshot(out) == before


def test_collect_never_replaces_a_record_and_rebuilds_from_the_directorys_own(committed_copy):
    out, subset = committed_copy
    before = snapshot(out)
    edited = next(subset.glob("ner/*/results.json"))
    edited.write_text(edited.read_text().replace('"date": "', '"date": "1', 1))  # same configuration, other bytes
    report.main(["--runs", str(subset), "--out", DIRECTORY, "--collect"])
    after = snapshot(out)
    extras = after.pop(Path("extras.md")).decode()
    before.pop(Path("extras.md"), None)
    after.pop(Path("report.json")), before.pop(Path("report.json"))  # its list of files made now names extras.md
    assert after == before  # the kept record stays; the tables are the directory's own, unchanged
    assert f"`{edited}`" in extras and "date=" in extras  # the record left out is listed, with why


def test_a_refused_collect_writes_nothing(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "elmo", 0, 70.0)
    record = next(runs.glob("**/results.json"))
    record.write_text(record.read_text().replace('"profile": "quick"', '"profile": "nonexistent"'))
    with pytest.raises(SystemExit):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--collect", "--profile", "other"])
    assert not (tmp_path / "out").exists()


def test_unknown_accept_keys_are_refused_with_the_nearest_valid_ones(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "elmo", 0, 70.0)
    with pytest.raises(ConfigError, match=r"--accept elmo.dropuot: no such setting; did you mean elmo.dropout"):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--accept", "elmo.dropuot"])
    assert not (tmp_path / "out").exists()
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--accept", "task.model", "elmo.dropout"])
