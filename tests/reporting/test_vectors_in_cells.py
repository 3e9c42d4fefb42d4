"""A run's word vectors count by their content in the report as in its identity: a cell prescribes the
profile's vectors (the shipped file of the model's size) by their hash, a run on a file of the user's own
shows that file's hash where it differs (not ``sha256:unknown``), and a run without vectors is its own arm."""

from conftest import REPO

from experiments.record import RECORD_VERSION, Record
from reporting.cell_rules import prescribed, record_settings
from static_vectors import shipped_vectors
from suite_common.hashing import content_sha256


def test_a_cell_prescribes_the_shipped_vectors_by_their_hash():
    wanted = prescribed(("task=ner", "source=local", "+ablation=baseline"))
    assert wanted["task.model.vectors"] == "sha256:" + content_sha256(shipped_vectors(50))
    assert prescribed(("task=ner", "source=local", "+ablation=no_pretraining"))["task.model.vectors"] is None


def test_a_run_on_its_own_vectors_shows_their_hash(tmp_path):
    own = tmp_path / "own.txt"
    own.write_text("the " + " ".join(["0.1"] * 50) + "\n")
    record = Record.from_dict(
        {
            "record_version": RECORD_VERSION,
            "task": "ner",
            "config": {"task": {"name": "ner", "model": {"word_dim": 50, "vectors": str(own)}}},
            "identity": {"files_sha256": {"task.model.vectors": content_sha256(own)}},
        }
    )
    assert record_settings(record)["task.model.vectors"] == "sha256:" + content_sha256(own)
    assert (REPO / "static_vectors" / "pretrained").is_dir()
