"""results/paper_profile.md is generated from the configs and matches the paper setting by setting."""

import pytest

from experiments import paper_numbers
from reporting import paper_profile


def test_committed_table_is_current_and_every_setting_matches():
    paper_profile.main(["--check"])  # exits non-zero on a mismatch or a stale file


def test_a_differing_setting_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(paper_profile, "SPEC", paper_profile.SPEC + [("ner", "λ", 0.5, "elmo.l2", "test")])
    text, mismatches = paper_profile.render()
    assert mismatches == 1 and "| ner | λ | 0.5 | `elmo.l2` | 0.1 | test | ✗ differs |" in text
    with pytest.raises(SystemExit, match="1 setting"):
        paper_profile.main(["--check", "--out", str(tmp_path / "x.md")])


TASKS = tuple(t for t in paper_numbers.TASKS if t in paper_numbers.REFERENCES)  # the tasks with a paper.py


@pytest.mark.every_task
@pytest.mark.parametrize("task", TASKS)
def test_every_elmo_setting_and_the_embedding_init_has_a_sourced_row(task):
    """No paper-profile value of ``elmo.*`` (position, mix, λ, dropout, layer norm), of the embeddings'
    initialization or of the biLM's fine-tuning (§3.4) may come from a suite default without a row naming
    its source."""
    cfg = paper_profile.composed(task)
    keys = {"elmo_position" if k == "position" else f"elmo.{k}" for k in cfg.elmo}
    keys |= {"task.model.embedding_init", "encoder.finetune"}
    if cfg.encoder.finetune:
        keys.add("encoder.finetune_epochs")
    rows = {key: source for t, _, _, key, source in paper_profile.SPEC if t == task}
    assert keys <= set(rows), f"{task}: no row for {sorted(keys - set(rows))}"
    assert all(rows[k].strip() for k in keys)
