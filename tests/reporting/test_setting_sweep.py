"""One setting varied against the committed records (reporting.setting_sweep)."""

from conftest import REPO
from report_records import BEFORE_VECTORS

from reporting.setting_sweep import main


def test_the_committed_SICK_cells_and_their_collapsed_class(tmp_path, capsys):
    main(
        [
            "--key",
            "elmo.dropout",
            "--runs",
            str(REPO / "results" / "history" / "small-v2_quick" / "runs"),
            "--ablations",
            "input,elmo",
            "--out",
            str(tmp_path / "t.md"),
            "--accept",
            *BEFORE_VECTORS,
        ]
    )
    text = (tmp_path / "t.md").read_text()
    assert (
        "| quick | nli | input | bilm | 0.5 | 3 | 61.82 ± 0.35 | 61.62 / 61.62 / 62.22 | 0.0 |" in text
    )  # no entailment
    assert "| quick | nli | elmo | bilm | 0.5 | 3 | 71.31 ± 0.53 |" in text and "| baseline |" not in text
    assert "| quick | ner | elmo | transformer | 0.5 | 3 | 70.67 ± 0.70 |" in text  # BERT's cells apart from the biLM's
