"""A record is evidence checked from its own content: a record cannot switch off the report's checks
by leaving a field out, its stored hash is recomputed, its files stay in its own directory, and
nothing it names is read without a bound."""

import dataclasses
import gzip
import hashlib
import json
import os
import shutil
import time

import pytest
from conftest import REPO
from report_records import BEFORE_VECTORS

from experiments.predictions_file import MAX_JSON_BYTES, copy_predictions, read_predictions_file
from experiments.record import Record
from experiments.run_directories import finished_run
from reporting.cell_rules import cell_settings, differences
from reporting.record_evidence import evidence_differences
from reporting.table_directory import collect
from suite_common.errors import DataError

SICK = REPO / "results/history/small-v2_quick/runs/nli/+ablation:elmo+profile:quick+seed:0+source:local"
POS = REPO / "results/history/small-v2_quick/runs/probe_pos"

ACCEPT = ["--accept", *BEFORE_VECTORS]  # records made before the static vectors


@pytest.fixture
def sick(tmp_path):
    """A copy of a committed quick SICK record (with its kept predictions), and a function to edit it."""
    run = tmp_path / "runs/nli/elmo-0"
    shutil.copytree(SICK, run)
    path = run / "results.json"

    def edit(change):
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
        return Record.read(path)

    return path, edit


def test_the_committed_record_shows_its_evidence(sick):
    path, _ = sick
    r = Record.read(path)
    assert evidence_differences(r) == {}
    # Table 1's ELMo run is also Table 2's λ = 0.001 and, for SICK (ELMo at input and output), Table 3's 'both'
    # (a run without vectors: with their keys accepted it is also the four-arm table's 'ELMo alone')
    assert cell_settings(r, tuple(BEFORE_VECTORS)) == ("elmo", "all_lambda0.001", "both", "elmo_alone")


def _forged_metric(data, value=80.0):
    data["dev"]["accuracy"] = value


@pytest.mark.parametrize(
    "change, flagged",
    [
        (lambda d: (d["config"]["task"].pop("name"), _forged_metric(d)), "config.task.name"),
        (lambda d: (d.update(predictions=None), _forged_metric(d)), "predictions.dev"),
        (lambda d: (d["identity"].pop("data_sha256"), _forged_metric(d)), "identity.data_sha256"),
        (lambda d: _forged_metric(d, float("nan")), "dev.accuracy"),
        (lambda d: _forged_metric(d, "99"), "dev.accuracy"),
        (lambda d: d["config"].update(seed=3), "config_hash (recomputed from its configuration)"),
        (lambda d: d.update(date="yesterday"), "date"),
        (lambda d: d.update(task="../tasks/nli"), "task"),
        (lambda d: (d.update(epochs=None), _forged_metric(d)), "epochs"),
    ],
    ids=[
        "task name removed",
        "predictions removed",
        "data hashes removed",
        "NaN",
        "string",
        "seed edited",
        "no date",
        "task a path",
        "history removed",
    ],
)
def test_a_record_cannot_switch_off_its_checks(sick, change, flagged):
    _, edit = sick
    r = edit(change)
    diff = differences(r, tuple(BEFORE_VECTORS))
    assert flagged in diff and cell_settings(r, tuple(BEFORE_VECTORS)) == ()  # an extra, never a cell


def test_a_dev_that_is_no_mapping_is_refused_by_the_records_schema(sick):
    """A ``dev`` that is a string is not a record the suite writes: the schema refuses it when it is read
    (the report lists it apart, ``test_malformed_records.py``)."""
    from experiments.record import RecordSchemaError

    _, edit = sick
    with pytest.raises(RecordSchemaError, match="dev='99' is not dict or null"):
        edit(lambda d: d.update(dev="99"))


def test_probe_accuracies_must_be_finite_numbers(tmp_path):
    source = next(p for p in sorted(POS.iterdir()) if (p / "results.json").exists())
    shutil.copytree(source, tmp_path / "probe")
    path = tmp_path / "probe/results.json"
    data = json.loads(path.read_text())
    assert evidence_differences(Record.read(path)) == {}
    first = next(iter(data["dev"]["accuracy_per_layer"]))
    data["dev"]["accuracy_per_layer"][first] = "97"
    path.write_text(json.dumps(data))
    assert "dev.accuracy_per_layer" in evidence_differences(Record.read(path))


def test_a_recent_pos_probe_record_must_keep_its_predictions(tmp_path):
    """A POS probe is trained as a task: since predictions are kept, its record without them is an extra
    (its per-layer accuracies are then re-scored like any task's metric, ``tests/tasks/test_probes.py``)."""
    source = next(p for p in sorted(POS.iterdir()) if (p / "results.json").exists())
    shutil.copytree(source, tmp_path / "probe")
    path = tmp_path / "probe/results.json"
    data = json.loads(path.read_text())
    data["date"] = "2026-11-26T12:00:00+00:00"
    path.write_text(json.dumps(data))
    assert list(evidence_differences(Record.read(path))) == ["predictions.dev"]


def test_run_py_reuses_a_record_only_when_its_recomputed_identity_is_the_launchs(sick, tmp_path):
    path, edit = sick
    digest = Record.read(path).config_hash
    out_dir = tmp_path / "runs/nli/launch"
    assert finished_run(out_dir, tmp_path / "runs", digest)["run_dir"] == str(path.parent)
    edit(lambda d: (d["config"]["trainer"].update(lr=0.5), _forged_metric(d, 99.0)))  # stored hash kept
    assert finished_run(out_dir, tmp_path / "runs", digest) is None


def _with_entry(path, name, payload_dir):
    data = json.loads(path.read_text())
    data["predictions"]["x"] = {"file": name, "sha256": hashlib.sha256(b"print('payload')").hexdigest()}
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("name", ["../../../../payload.py", "/tmp/payload.py", "sub/payload.py", ".."])
def test_collect_never_writes_outside_the_tables(sick, tmp_path, name):
    path, _ = sick
    _with_entry(path, name, path.parent)
    (tmp_path / "payload.py").write_text("print('payload')")
    out = tmp_path / "tables"
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(DataError, match="not a file name inside the run directory"):
        collect(path, tmp_path / "runs", out / "runs")
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing written anywhere


def test_predictions_through_a_link_are_refused(sick, tmp_path):
    path, _ = sick
    (tmp_path / "secret").write_bytes(b"print('payload')")
    os.symlink(tmp_path / "secret", path.parent / "linked.json.gz")
    _with_entry(path, "linked.json.gz", path.parent)
    with pytest.raises(DataError, match="symbolic link"):
        copy_predictions(Record.read(path).predictions, path.parent, tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_a_fifo_or_a_huge_file_is_refused_without_reading_it(tmp_path):
    os.mkfifo(tmp_path / "results.json")
    start = time.time()
    with pytest.raises(DataError, match="not a regular file"):
        Record.read(tmp_path / "results.json")
    assert time.time() - start < 5  # no hang
    big = tmp_path / "big" / "results.json"
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(17 << 20)  # sparse: no disk used
    with pytest.raises(DataError, match="larger than 16 MB"):
        Record.read(big)


def test_a_gzip_bomb_is_refused_after_its_limit(tmp_path):
    bomb = tmp_path / "dev_predictions.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        chunk = b"0" * (1 << 20)
        for _ in range(MAX_JSON_BYTES // len(chunk) + 2):
            f.write(chunk)
    data = bomb.read_bytes()
    assert len(data) < 2 << 20  # a small file...
    entry = {"file": bomb.name, "sha256": hashlib.sha256(data).hexdigest(), "examples": 1}
    with pytest.raises(DataError, match="decompresses to more than"):
        read_predictions_file(bomb, entry)  # ...that is never decompressed whole


def _table_dir(tmp_path):
    """A copy of the committed quick tables with their records (SICK's only, to stay small)."""
    out = tmp_path / "small"
    committed = REPO / "results/history/small-v2_quick"
    out.mkdir()
    shutil.copytree(committed / "runs/nli", out / "runs/nli")
    return out


def _snapshot(directory):
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "code, said",
    [(28, "disk full"), (30, "read-only file system"), (13, "permission denied")],
    ids=["disk full", "read-only --out", "no permission"],
)
def test_a_failed_report_leaves_its_directory_exactly_as_it_was(tmp_path, monkeypatch, code, said):
    """A full disk, a read-only file system or a refused write, met at the last file written: the table
    directory is as it was, no copy is left beside it, and the message is one line saying which."""
    from reporting import figures, report

    out = _table_dir(tmp_path)
    report.main(["--runs", str(out / "runs"), "--out", str(out), *ACCEPT])
    before = _snapshot(out)

    def broken(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(out / "error_reduction.png"))

    original = next(t for t in report.TABLES if t.stem == "table1").make

    def changed(inputs):
        rows, used, notes = original(inputs)
        return rows.assign(task="changed"), used, notes

    tables = tuple(dataclasses.replace(t, make=changed) if t.stem == "table1" else t for t in report.TABLES)
    monkeypatch.setattr(report, "TABLES", tables)  # table1.md differs...
    monkeypatch.setattr(figures, "error_reduction_figure", broken)  # ...and then the last thing written fails
    with pytest.raises(OSError):
        report.main(["--runs", str(out / "runs"), "--out", str(out), *ACCEPT])
    assert _snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["small"]  # no copy left beside it
    assert report.disk_message(OSError(code, os.strerror(code), "x")) == f"x: {said}; the table directory is unchanged"


def test_a_refused_forged_record_changes_no_table(tmp_path):
    from reporting import report

    out = _table_dir(tmp_path)
    report.main(["--runs", str(out / "runs"), "--out", str(out), *ACCEPT])
    before = _snapshot(out)
    forged = tmp_path / "received/nli/elmo-0"
    shutil.copytree(SICK, forged)
    data = json.loads((forged / "results.json").read_text())
    data["config"]["task"].pop("name")
    data["dev"]["accuracy"] = 80.0
    (forged / "results.json").write_text(json.dumps(data))
    with pytest.raises(SystemExit, match="config.task.name"):
        report.main(["--runs", str(tmp_path / "received"), "--out", str(out), "--collect", *ACCEPT])
    assert _snapshot(out) == before


# ---- the records excused from keeping evidence: named by SHA-256 in a committed manifest, never by their date


def _listed_paths() -> list[str]:
    lines = (REPO / "results/pre_evidence_records.sha256").read_text().splitlines()
    return [line.split(None, 1)[1] for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.real_manifest
def test_the_manifest_names_committed_records_by_their_bytes():
    lines = [line for line in (REPO / "results/pre_evidence_records.sha256").read_text().splitlines() if line.strip()]
    listed = [line.split() for line in lines if not line.startswith("#")]
    assert len(listed) > 400
    for sha, path in listed:  # frozen: a listed record is never edited (it would lose its place)
        assert hashlib.sha256((REPO / path).read_bytes()).hexdigest() == sha, path


@pytest.mark.real_manifest
@pytest.mark.parametrize(
    "change, flagged",
    [
        (lambda d: (d["config"]["task"].pop("name"), _forged_metric(d, 58.0)), "config.task.name"),
        (lambda d: (d.update(predictions=None), _forged_metric(d, 99.0), d.update(epochs=[])), "predictions.dev"),
    ],
)
def test_an_old_date_excuses_no_record(sick, change, flagged):
    path, edit = sick
    r = edit(lambda d: (d.update(date="2026-11-21T10:00:00+00:00"), change(d)))
    assert flagged in evidence_differences(r)
    assert cell_settings(r) == () and flagged in differences(r, tuple(BEFORE_VECTORS))


@pytest.mark.real_manifest
def test_a_listed_record_is_excused_until_one_byte_changes(tmp_path):
    listed = next(p for p in _listed_paths() if "/probe_pos/" in p)
    run = tmp_path / "probe"
    shutil.copytree((REPO / listed).parent, run)
    path = run / "results.json"
    assert evidence_differences(Record.read(path)) == {}  # a copy anywhere: the same bytes, still listed
    data = json.loads(path.read_text())
    first = next(iter(data["dev"]["accuracy_per_layer"]))
    data["dev"]["accuracy_per_layer"][first] = 99.9
    path.write_text(json.dumps(data))
    assert "predictions.dev" in evidence_differences(Record.read(path))  # edited: no longer listed
