"""A report never writes through a link, never into the working directory, a folder above it or a system
folder, never two at once into one folder, and never removes a file it did not make; a runs root with a
link inside and a malformed report.json are one line (``reporting.table_folder_guard``)."""

from __future__ import annotations

import json
import os

import pytest
from report_records import write_record

from reporting import report, table_folder_guard
from suite_common.locks import acquire


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    for seed in (0, 1):
        write_record(root, "ner", "baseline", seed, 80.0 + seed, position="none")
        write_record(root, "ner", "elmo", seed, 85.0 + seed)
    return root


def one_line(excinfo) -> str:
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith("error: "), message
    return message


def test_a_link_inside_the_table_folder_is_refused_and_its_target_kept(tmp_path, runs):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere.md"
    report.main(["--runs", str(runs), "--out", str(out)])
    elsewhere.write_text("someone's file")
    (out / "table1.md").unlink()
    (out / "table1.md").symlink_to(elsewhere)
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", str(out)])
    assert "table1.md is a symbolic link" in one_line(e) and elsewhere.read_text() == "someone's file"


def test_a_runs_folder_that_is_a_link_is_refused_before_collecting(tmp_path, runs):
    out, target = tmp_path / "out", tmp_path / "target"
    target.mkdir()
    out.mkdir()
    (out / "runs").symlink_to(target)
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", str(out), "--collect"])
    assert "runs is a symbolic link" in one_line(e) and not any(target.iterdir())


def test_out_given_as_a_link_is_resolved_once_and_said(tmp_path, runs, capsys):
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    report.main(["--runs", str(runs), "--out", str(link)])
    assert f"--out {link} is a link to {real}" in capsys.readouterr().out
    assert link.is_symlink() and (real / "table1.md").is_file()


@pytest.mark.parametrize("out", [".", "..", "/"])
def test_the_working_directory_a_folder_above_it_and_the_root_are_refused(tmp_path, runs, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", out])
    one_line(e)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "runs"]


def test_a_read_only_folder_is_one_line_and_nothing_is_left(tmp_path, runs, monkeypatch):
    out = tmp_path / "out"
    report.main(["--runs", str(runs), "--out", str(out)])
    before = sorted(p.name for p in tmp_path.iterdir())

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(table_folder_guard.os, "statvfs", lambda path: ReadOnly())
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", str(out)])
    assert "read-only file system" in one_line(e) and len(str(e.value)) < 300
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_second_report_into_the_same_folder_stops_in_one_line(tmp_path, runs):
    out = tmp_path / "out"
    held = acquire(tmp_path / ".out.report-lock", wait=False)
    try:
        with pytest.raises(SystemExit) as e:
            report.main(["--runs", str(runs), "--out", str(out)])
    finally:
        held.close()
    assert "another report is writing" in one_line(e) and not out.exists()
    report.main(["--runs", str(runs), "--out", str(out)])  # the lock released, the report runs
    assert (out / "table1.md").is_file() and not (tmp_path / ".out.report-lock").exists()


def test_a_file_the_report_did_not_make_is_never_removed(tmp_path, runs):
    out = tmp_path / "out"
    out.mkdir()
    (out / "extras.md").write_text("my notes")  # no extras in these runs: a report would remove its own
    (out / "table2.md").write_text("my table")  # no runs for Table 2 either
    report.main(["--runs", str(runs), "--out", str(out)])
    assert (out / "extras.md").read_text() == "my notes" and (out / "table2.md").read_text() == "my table"
    assert "extras.md" not in json.loads((out / "report.json").read_text())["made"]


def test_a_link_inside_a_runs_root_is_named(tmp_path, runs):
    elsewhere = tmp_path / "elsewhere"
    (runs / "ner").rename(elsewhere)
    (runs / "ner").symlink_to(elsewhere)
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    assert f"{runs / 'ner'} is a symbolic link" in one_line(e)


@pytest.mark.parametrize("stored", ["[]", "null", '"x"', '{"runs": 5}', '{"profile": ["a"]}', '{"accept": [1]}'])
def test_a_malformed_report_json_is_one_line(tmp_path, runs, stored):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text(stored)
    with pytest.raises(SystemExit) as e:
        report.main(["--runs", str(runs), "--out", str(out)])
    assert "report.json" in one_line(e)
