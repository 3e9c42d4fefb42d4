"""A report either rewrites its table directory whole or leaves it exactly as it was, whatever fails, also
while the directory is put back; what a killed report left is put back by the next one; ``--collect``
never gathers its own table directory and lists every record it leaves out."""

import errno
import os
import shutil
import subprocess
import sys

import pytest
from report_records import write_record

from reporting import directory_backup, figures, report


def _snapshot(directory):
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def tables(tmp_path):
    """A table directory built by a report of synthetic runs, and the runs."""
    runs = tmp_path / "runs"
    for seed, (b, e) in enumerate([(80.0, 90.0), (82.0, 91.0)]):
        write_record(runs, "ner", "baseline", seed, b)
        write_record(runs, "ner", "elmo", seed, e)
    out = tmp_path / "tables"
    report.main(["--runs", str(runs), "--out", str(out)])
    return runs, out


def _failing_report(monkeypatch, out):
    """A report that rewrites table1.md, then fails (a full disk)."""

    def fail(df, directory, *_):
        (directory / "table1.md").write_text("half rebuilt")
        raise OSError(errno.ENOSPC, "No space left on device", str(directory / "x.png"))

    monkeypatch.setattr(report, "write_figures", fail)


def _refuse(monkeypatch, module, name, when):
    """``module.name`` raising PermissionError for the calls ``when(*args)`` picks; the others as before."""
    real = getattr(module, name)

    def refused(*args, **kwargs):
        if when(*args) and kwargs.get("ignore_errors"):  # rmtree(..., ignore_errors=True) says nothing
            return None
        if when(*args):
            raise PermissionError(errno.EPERM, "Operation not permitted", str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, refused)


def _leftovers(out):
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.mark.parametrize(
    "step",
    [
        "none",
        "a file of the directory cannot be removed",  # chattr +i on table1.md, as root
        "the directory cannot be renamed aside",
        "the copy cannot be renamed in",
        "the failed directory cannot be removed",
    ],
)
def test_a_failed_report_leaves_the_directory_exactly_as_it_was_whatever_step_fails(tables, step):
    runs, out = tables
    before = _snapshot(out)
    with pytest.MonkeyPatch.context() as injected:
        _failing_report(injected, out)
        if step == "a file of the directory cannot be removed":
            _refuse(injected, os, "unlink", lambda path, *a: str(path).endswith("table1.md"))
        elif step == "the directory cannot be renamed aside":
            _refuse(injected, os, "rename", lambda src, *a: str(src) == str(out))
        elif step == "the copy cannot be renamed in":
            _refuse(injected, os, "rename", lambda src, *a: ".before-report-" in str(src))
        elif step == "the failed directory cannot be removed":
            _refuse(injected, shutil, "rmtree", lambda path, *a: ".failed-report-" in str(path))
        with pytest.raises(OSError, match="No space left"):
            report.main(["--runs", str(runs), "--out", str(out)])
    assert _snapshot(out) == before
    if step in ("a file of the directory cannot be removed", "the failed directory cannot be removed"):
        (left,) = _leftovers(out)  # what the failed report wrote, beside the directory; the next report removes it
        assert ".failed-report-" in left
        (out.parent / left).rename(out.parent / left.replace(str(os.getpid()), str(_dead_pid())))
        report.main(["--runs", str(runs), "--out", str(out)])
        assert _snapshot(out) == before
    assert _leftovers(out) == []


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_when_nothing_can_put_it_back_the_error_says_where_the_copy_is(tables, monkeypatch):
    runs, out = tables
    before = _snapshot(out)
    _failing_report(monkeypatch, out)
    _refuse(monkeypatch, os, "rename", lambda src, *a: True)
    _refuse(monkeypatch, shutil, "copytree", lambda src, *a: ".before-report-" in str(src))
    with pytest.raises(
        directory_backup.RestoreFailed, match=r"could not be put back as it was .* is in .*before-report"
    ):
        report.main(["--runs", str(runs), "--out", str(out)])
    monkeypatch.undo()
    kept = out.parent / _leftovers(out)[0]
    assert _snapshot(kept) == before  # nothing lost: the copy is where the message says


def test_a_killed_reports_copy_is_put_back_by_the_next_report(tables):
    runs, out = tables
    before = _snapshot(out)
    pid = _dead_pid()
    shutil.copytree(out, out.parent / f".{out.name}.before-report-{pid}")  # what kill -9 left: the copy...
    (out / "table1.md").write_text("half rebuilt")  # ...and a half rebuilt directory
    shutil.copytree(out, out.parent / f".{out.name}.failed-report-{pid}")
    said = directory_backup.clean_up_dead_reports(out)
    assert said and "put back" in said[0]
    assert _snapshot(out) == before and _leftovers(out) == []
    report.main(["--runs", str(runs), "--out", str(out)])
    assert _snapshot(out) == before  # the next report rebuilds the same tables


def test_a_figure_that_cannot_be_drawn_does_not_stop_the_report(tables, monkeypatch, capsys):
    runs, out = tables

    def broken(df, path):
        raise ValueError("'xerr' must not contain negative values")

    monkeypatch.setattr(figures, "error_reduction_figure", broken)
    report.main(["--runs", str(runs), "--out", str(out)])
    said = capsys.readouterr().out
    assert "error_reduction: not drawn (ValueError: 'xerr' must not contain negative values)" in said
    assert (out / "table1.md").exists()


def test_collect_refuses_a_table_directory_inside_the_runs(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0)
    with pytest.raises(SystemExit, match=r"--out .*tables is inside --runs .*runs: --collect would gather"):
        report.main(["--runs", str(runs), "--out", str(runs / "tables"), "--collect"])
    assert not (runs / "tables").exists()


def test_collect_lists_the_records_it_leaves_out_with_their_reason(tmp_path, capsys):
    import json

    runs = tmp_path / "runs"
    for seed in (0, 1):
        write_record(runs, "ner", "baseline", seed, 80.0 + seed)
        write_record(runs, "ner", "elmo", seed, 90.0 + seed)
    odd = runs / "ner" / "elmo-1-1.0" / "results.json"
    data = json.loads(odd.read_text())
    data["config"]["task"]["name"] = "sst"  # not the record's own task: refused
    odd.write_text(json.dumps(data))
    out = tmp_path / "tables"
    report.main(["--runs", str(runs), "--out", str(out), "--collect"])
    assert "1 extras" in capsys.readouterr().out
    extras = (out / "extras.md").read_text()
    assert str(odd) in extras and "config.task.name='sst' (prescribed 'ner')" in extras
