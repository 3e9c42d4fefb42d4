"""The predictions kept beside a record: what each task predicts round-trips, and an altered or
truncated file is refused by its SHA-256 before anything is scored."""

import gzip
import hashlib
import json

import pytest

from experiments.predictions_file import read_predictions_file, write_predictions_file
from suite_common.errors import DataError

PREDICTIONS = {  # what the tasks predict, by kind
    "tag sequences": [["B-PER", "I-PER", "O"], [], ["O", "B-LOC"]],
    "label ids": [0, 4, 2],
    "token spans": [(3, 5), (0, 0)],
    "clusters of token spans": [[[[0, 1], [4, 4]], [[7, 9]]], []],
}


@pytest.mark.parametrize("kind", sorted(PREDICTIONS))
def test_predictions_round_trip(tmp_path, kind):
    entry = write_predictions_file(tmp_path / "dev_predictions.json.gz", "a task", "dev", PREDICTIONS[kind])
    assert entry["file"] == "dev_predictions.json.gz" and entry["examples"] == len(PREDICTIONS[kind])
    back = read_predictions_file(tmp_path / entry["file"], entry)
    assert back == [list(p) if isinstance(p, tuple) else p for p in PREDICTIONS[kind]]


def test_tags_are_stored_as_ids_in_a_compressed_file(tmp_path):
    tags = [["O"] * 30 + ["B-PER"]] * 200
    entry = write_predictions_file(tmp_path / "p.json.gz", "ner", "dev", tags)
    body = json.loads(gzip.decompress((tmp_path / "p.json.gz").read_bytes()))
    assert body["vocabulary"] == ["O", "B-PER"] and body["predictions"][0][-1] == 1
    assert entry["bytes"] < 1000  # 6,200 tags


def test_an_edited_predictions_file_is_refused(tmp_path):
    path = tmp_path / "p.json.gz"
    entry = write_predictions_file(path, "sst", "dev", [0, 1, 2])
    body = json.loads(gzip.decompress(path.read_bytes()))
    body["predictions"][0] = 1
    path.write_bytes(gzip.compress(json.dumps(body).encode()))
    with pytest.raises(DataError, match="differs from the SHA-256"):
        read_predictions_file(path, entry)


def test_a_truncated_or_missing_file_is_refused(tmp_path):
    path = tmp_path / "p.json.gz"
    entry = write_predictions_file(path, "sst", "dev", list(range(5)) * 100)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="SHA-256"):
        read_predictions_file(path, entry)
    rehashed = {**entry, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    with pytest.raises(DataError, match="not a predictions file"):  # truncated, its hash 'fixed' in the record
        read_predictions_file(path, rehashed)
    path.unlink()
    with pytest.raises(DataError, match="unreadable"):
        read_predictions_file(path, entry)
