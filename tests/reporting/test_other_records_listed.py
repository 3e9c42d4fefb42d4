"""A table folder reports one profile and one biLM: a record of another below its runs is listed in
``extras.md`` with its biLM or profile, never left out without a word."""

from report_records import with_bilm, write_record

from reporting import report


def test_a_record_of_another_bilm_is_listed_with_its_biLM(tmp_path, capsys):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, position="none")
    write_record(runs, "ner", "elmo", 0, 85.0)
    with_bilm(next(runs.glob("ner/elmo-*/results.json")), "a" * 64)
    out = tmp_path / "tables"
    report.main(["--runs", str(runs), "--out", str(out)])
    assert not (out / "extras.md").exists()
    other = tmp_path / "more" / "ner"
    write_record(other.parent, "ner", "elmo", 1, 70.0)
    with_bilm(next(other.glob("*/results.json")), "b" * 64)
    report.main(["--runs", str(runs), str(tmp_path / "more"), "--out", str(tmp_path / "second"), "--bilm", "aaaa"])
    extras = (tmp_path / "second" / "extras.md").read_text()
    assert "biLM (these tables report another's" in extras and "'bbbbbbbbbbbb' (prescribed 'aaaaaaaaaaaa')" in extras
    assert "1 extras" in capsys.readouterr().out.splitlines()[-1]


def test_a_tables_title_names_its_biLM_and_vectors(tmp_path):
    """Names, not only hashes: the biLM by its folder (a shipped one by its name) with its hash, and the vectors."""
    import json

    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, position="none")
    write_record(runs, "ner", "elmo", 0, 85.0)
    for path in runs.glob("ner/*/results.json"):
        with_bilm(path, "c" * 64)
        r = json.loads(path.read_text())
        r["config"]["encoder"]["options"] = "/home/me/bilms/my-bilm/options.json"
        r["config"]["task"]["model"] = {"word_dim": 50, "vectors": "shipped"}
        r["identity"]["files_sha256"] = {"task.model.vectors": "d" * 64}
        path.write_text(json.dumps(r))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    title = (tmp_path / "out" / "table1.md").read_text().splitlines()[0]
    assert "biLM my-bilm (cccccccccccc)" in title and "vectors lm-text 50-d" in title
