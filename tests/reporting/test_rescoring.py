"""The report re-scores every record from its kept predictions: a record whose dev metric was raised
(with its epoch history, so it agrees with itself) or whose predictions were edited never joins a
cell, and goes to extras.md with the reason. Checked on copies of the committed Table 1 NER records."""

import gzip
import hashlib
import json
import re
import shutil

import pytest
from conftest import REPO
from report_records import BEFORE_VECTORS

from experiments.rescoring import rescore, rescoring_status
from reporting import report

COMMITTED = REPO / "results" / "history" / "small-v2_quick" / "runs" / "ner"

ACCEPT = ["--accept", *BEFORE_VECTORS]  # records made before the static vectors


def table1_ner_records():
    found = []
    for path in sorted(COMMITTED.glob("*/results.json")):
        r = json.loads(path.read_text())
        if r.get("ablation") in ("baseline", "elmo") and r.get("predictions"):
            found.append(path)
    assert len(found) >= 6, "the committed Table 1 NER records keep their predictions"
    return found


def copy_records(paths, root):
    for path in paths:
        shutil.copytree(path.parent, root / "ner" / path.parent.name)


def ner_row(out):
    return next(line for line in (out / "table1.md").read_text().splitlines() if line.startswith("| ner (f1; paper"))


def test_committed_records_are_rescored_to_their_numbers():
    from experiments.record import Record

    for path in table1_ner_records():
        r = Record.read(path)
        assert rescoring_status(r) == "re-scored"
        assert rescore(r).value == pytest.approx(r.value, abs=1e-9)


def test_a_consistently_raised_metric_never_joins_a_cell(tmp_path):
    records = table1_ner_records()
    copy_records(records, tmp_path / "runs")
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "before"), *ACCEPT])
    for path in records:  # the same records raised by 7, dev.f1 and the best epoch's dev_f1 alike, beside them
        r = json.loads(path.read_text())
        r["dev"]["f1"] += 7
        next(e for e in r["epochs"] if e["epoch"] == r["best_epoch"])["dev_f1"] += 7
        d = tmp_path / "runs" / "raised" / "ner" / path.parent.name
        shutil.copytree(path.parent, d)
        (d / "results.json").write_text(json.dumps(r))
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "after"), *ACCEPT])
    assert ner_row(tmp_path / "after") == ner_row(tmp_path / "before")
    extras = (tmp_path / "after" / "extras.md").read_text()
    assert extras.count("dev.f1 (re-scored from its predictions)") == len(records)


def test_edited_predictions_are_caught(tmp_path):
    path = next(p for p in table1_ner_records() if json.loads(p.read_text())["ablation"] == "elmo")
    copy_records([path], tmp_path / "runs")
    d = tmp_path / "runs" / "ner" / path.parent.name
    record = json.loads((d / "results.json").read_text())
    entry = record["predictions"]["dev"]
    body = json.loads(gzip.decompress((d / entry["file"]).read_bytes()))
    o = body["vocabulary"].index("O")
    body["predictions"] = [[o] * len(p) for p in body["predictions"]]  # every tag O: another model's output
    data = gzip.compress(json.dumps(body).encode())
    (d / entry["file"]).write_bytes(data)
    with pytest.raises(SystemExit, match=r"differs from what its profile prescribes .*dev predictions"):
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), *ACCEPT])  # hash differs
    entry["sha256"] = hashlib.sha256(data).hexdigest()  # and with the hash 'fixed' in the record too
    (d / "results.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match=r"dev.f1 \(re-scored from its predictions\)=[\d.]+ \(prescribed 0.0\)"):
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), *ACCEPT])


def test_table1_gives_bootstrap_intervals_for_rescored_cells(tmp_path):
    copy_records(table1_ner_records(), tmp_path / "runs")
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), *ACCEPT])
    row = ner_row(tmp_path / "out")
    assert re.search(r"\[[+-][\d.]+, [+-][\d.]+\], p[<=][\d.]+", row), row
    assert "Re-scored from their kept predictions: 6 of 6 records." in (tmp_path / "out" / "table1.md").read_text()
