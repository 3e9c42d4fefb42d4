"""Old and new report tables side by side (reporting.compare_tables)."""

import pandas as pd
import pytest

from reporting.compare_tables import CompareError, compare, write


def _write(d, name, text):
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.csv").write_text(text)


def test_cells_side_by_side_with_the_change_and_what_is_missing(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    header = 'task,"baseline (ours, dev)","ELMo (ours, dev)",paper baseline / ELMo (test)\n'
    _write(
        old,
        "table1",
        header + "ner,66.89 ± 1.76 (n=3),74.95 ± 0.48 (n=3),90.15 / 92.22\n"
        "sst,38.27 ± 0.59 (n=3),40.45 ± 0.82 (n=3),51.4 / 54.7\n",
    )
    _write(new, "table1", header + "ner,66.89 ± 1.76 (n=3),76.22 ± 0.64 (n=3),90.15 / 92.22\n")
    _write(old, "table7", "task,dev perplexity before → after (ours),paper\nnli,1118.5 → 76.7,x\n")
    _write(new, "table7", "task,dev perplexity before → after (ours),paper\nnli,474.0 → 67.1,x\n")
    _write(new, "table2", "")
    text = write(old, new, tmp_path / "out" / "compare.md").read_text()
    assert "| ner " in text and "66.89 ± 1.76 (n=3) (same)" in text
    assert "74.95 ± 0.48 (n=3) → 76.22 ± 0.64 (n=3) (+1.27)" in text
    assert "40.45 ± 0.82 (n=3) → —" in text  # a row the new table lacks stays visible
    assert "old 1118.5 → 76.7; new 474.0 → 67.1" in text
    assert "90.15 / 92.22" not in text  # only our own columns
    assert f"{old / 'table2.csv'} missing" in text and f"{new / 'table2.csv'} has no rows" in text
    assert f"{old / 'probes.csv'} missing" in text


def test_a_gains_intervals_and_p_value_are_compared_without_a_change_of_mean(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    header = 'task,"ELMo (ours, dev)",increase: 95% interval over seeds,"increase: paired bootstrap: 95% interval, p"\n'
    _write(old, "table1", header + 'sst,39.54 (n=3),"[-0.00, +2.55] ≈0","[-0.64, +3.18], p=0.19"\n')
    _write(new, "table1", header + 'sst,40.45 (n=3),"[+0.10, +3.12]","[+0.05, +3.61], p=0.041"\n')
    text = write(old, new, tmp_path / "c.md").read_text()
    assert "| [-0.00, +2.55] ≈0 → [+0.10, +3.12] |" in text.replace("  ", " ").replace("  ", " ")
    assert "[-0.64, +3.18], p=0.19 → [+0.05, +3.61], p=0.041 " in text
    assert "39.54 (n=3) → 40.45 (n=3) (+0.91)" in text


def test_a_table_without_its_key_column_is_an_error():
    with pytest.raises(CompareError, match="the old table has no column 'task'"):
        compare(pd.DataFrame({"x": ["a"]}), pd.DataFrame({"task": ["a"], "v (ours)": ["1"]}), ["task"], "table1")


def test_two_profiles_of_one_biLM_are_titled_as_such(tmp_path):
    quick, paper = tmp_path / "quick", tmp_path / "paper"
    header = 'task,"baseline (ours, dev)","ELMo (ours, dev)"\n'
    _write(quick, "table1", header + "nli,75.02 ± 2.83 (n=3),71.31 ± 0.53 (n=3)\n")
    _write(paper, "table1", header + "nli,— (n=0),71.52 (n=1)\n")
    text = write(quick, paper, tmp_path / "c.md", profiles=True).read_text()
    assert text.startswith("# Quick and paper profile side by side") and "--profiles`" in text
    assert "71.31 ± 0.53 (n=3) → 71.52 (n=1) (+0.21)" in text
