"""results/paper_profile.md is generated from the configs and matches the paper setting by setting."""
import pytest

from reporting import paper_profile


def test_committed_table_is_current_and_every_setting_matches():
    paper_profile.main(["--check"])  # exits non-zero on a mismatch or a stale file


def test_a_differing_setting_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(paper_profile, "SPEC", paper_profile.SPEC + [("ner", "λ", 0.5, "elmo.l2", "test")])
    text, mismatches = paper_profile.render()
    assert mismatches == 1 and "| ner | λ | 0.5 | `elmo.l2` | 0.1 | test | ✗ differs |" in text
    with pytest.raises(SystemExit, match="1 setting"):
        paper_profile.main(["--check", "--out", str(tmp_path / "x.md")])
