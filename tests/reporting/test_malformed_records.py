"""A record whose fields are not of the kinds the suite writes (a hand edit, another tool's file) is listed
apart in extras.md with the field at fault; the report goes on with the others, without a traceback."""

import json

import pytest
from report_records import write_record

from reporting import report


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda r: r["config"].update(data=5), "config.data=5 is not a mapping"),
        (lambda r: r.update(epochs="x"), "epochs='x' is not list or int or null"),
        (lambda r: r.update(identity=[]), "identity=[] is not dict or null"),
        (lambda r: r.update(mixing_weights="x"), "mixing_weights='x' is not dict or null"),
        (lambda r: r.update(command=5), "command=5 is not str"),
        (lambda r: r["config"]["task"].update(name=["ner"]), "config.task.name=['ner'] is not a string"),
    ],
)
def test_a_malformed_record_is_listed_with_the_field_at_fault(tmp_path, edit, said):
    runs = tmp_path / "runs"
    for seed in (0, 1):
        write_record(runs, "ner", "baseline", seed, 80.0 + seed, position="none")
        write_record(runs, "ner", "elmo", seed, 85.0 + seed)
    path = next(runs.glob("ner/elmo-1-*/results.json"))
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    extras = (tmp_path / "out" / "extras.md").read_text()
    assert said in extras and str(path) in extras
    assert "(n=1)" in (tmp_path / "out" / "table1.md").read_text()  # the ELMo cell of the other seed
