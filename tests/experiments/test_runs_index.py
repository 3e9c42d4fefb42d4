"""The runs index (experiments.runs_index): one walk of a runs root per process, digests recomputed only for
records that changed, and an index that can only point, never decide which record is reused."""

from __future__ import annotations

import json

from experiments import runs_index


def _records(root, n):
    for k in range(n):
        d = root / "ner" / f"run{k}"
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps({"digest_of": f"d{k}"}))


def _counting():
    calls = []

    def digest(record):
        calls.append(record)
        return record.get("digest_of")

    return calls, digest


def read(path):
    return json.loads(path.read_text())


def test_a_second_process_recomputes_only_the_records_that_changed(tmp_path):
    _records(tmp_path, 5)
    calls, digest = _counting()
    path, record = runs_index.find(tmp_path, "d3", "results.json", read, digest)
    assert path == tmp_path / "ner/run3/results.json" and record["digest_of"] == "d3"
    assert len(calls) == 6  # five recomputed, the match once more before it is used
    assert (tmp_path / runs_index.INDEX_NAME).is_file()
    runs_index.forget_walks()  # a new process
    calls.clear()
    assert runs_index.find(tmp_path, "d1", "results.json", read, digest)[0].parent.name == "run1"
    assert len(calls) == 1  # only the match, read again
    (tmp_path / "ner/run4/results.json").write_text(json.dumps({"digest_of": "d4-edited!"}))
    runs_index.forget_walks()
    calls.clear()
    assert runs_index.find(tmp_path, "missing", "results.json", read, digest) is None
    assert [c["digest_of"] for c in calls] == ["d4-edited!"]


def test_a_forged_or_stale_index_never_makes_another_record_reused(tmp_path):
    _records(tmp_path, 2)
    calls, digest = _counting()
    runs_index.find(tmp_path, "none", "results.json", read, digest)
    index = json.loads((tmp_path / runs_index.INDEX_NAME).read_text())
    index["records"]["ner/run0/results.json"][2] = "wanted"  # run0's entry claims another identity
    (tmp_path / runs_index.INDEX_NAME).write_text(json.dumps(index))
    runs_index.forget_walks()
    assert runs_index.find(tmp_path, "wanted", "results.json", read, digest) is None
    index["code"] = "another code version"  # every digest is recomputed under another code version
    (tmp_path / runs_index.INDEX_NAME).write_text(json.dumps(index))
    runs_index.forget_walks()
    calls.clear()
    assert runs_index.find(tmp_path, "d0", "results.json", read, digest)[0].parent.name == "run0"
    assert len(calls) == 3


def test_the_root_is_walked_once_per_process_and_written_records_join(tmp_path, monkeypatch):
    _records(tmp_path, 2)
    walks = []
    real_walk = runs_index.os.walk
    monkeypatch.setattr(runs_index.os, "walk", lambda *a, **k: walks.append(a) or real_walk(*a, **k))
    calls, digest = _counting()
    runs_index.find(tmp_path, "d0", "results.json", read, digest)
    late = tmp_path / "ner/late/results.json"
    late.parent.mkdir()
    late.write_text(json.dumps({"digest_of": "late"}))
    assert runs_index.find(tmp_path, "late", "results.json", read, digest) is None  # not walked again
    runs_index.note_written(late)
    assert runs_index.find(tmp_path, "late", "results.json", read, digest)[0] == late
    assert len(walks) == 1


def test_a_link_in_the_runs_root_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    _records(outside, 1)
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "ner").symlink_to(outside / "ner")
    calls, digest = _counting()
    assert runs_index.find(tmp_path / "root", "d0", "results.json", read, digest) is None


def test_a_lookup_that_keeps_nothing_writes_no_index(tmp_path):
    """A dry run writes nothing: its lookup reads the index where there is one and never writes one."""
    _records(tmp_path, 2)
    calls, digest = _counting()
    assert runs_index.find(tmp_path, "d1", "results.json", read, digest, keep=False)[0].parent.name == "run1"
    assert not (tmp_path / runs_index.INDEX_NAME).exists()
