"""``python -m elmo_core.neighbors`` (Table 4): nearest word types of the token layer and nearest
other occurrences in context; a missing word is one clear error."""

import numpy as np
import pytest

from elmo_core.neighbors import main, nearest


def test_nearest_excludes_and_orders_by_cosine():
    candidates = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    assert nearest(np.array([1.0, 0.0]), candidates, 2) == [0, 1]
    assert nearest(np.array([1.0, 0.0]), candidates, 2, {0}) == [1, 2]


def test_neighbors_command_writes_a_table(bilm_files, tmp_path, capsys):
    o, w = bilm_files
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "options.json").write_bytes(o.read_bytes())
    (tmp_path / "model" / "weights.hdf5").write_bytes(w.read_bytes())
    corpus = tmp_path / "a.txt"
    corpus.write_text(
        "the children play in the park\nwe saw a play at the theatre\nthey play chess\n"
        "a fair play award\nthe park is green\n"
    )
    out = tmp_path / "table4.md"
    main(
        [
            "--word",
            "play",
            "--corpus",
            str(corpus),
            "--model",
            str(tmp_path / "model"),
            "--queries",
            "1",
            "--neighbours",
            "3",
            "--out",
            str(out),
        ]
    )
    text = out.read_text()
    assert "| token layer (out of context): play |" in text and text.count("| biLM (a):") == 1
    row = [line for line in text.splitlines() if line.startswith("| biLM")][0]
    query, neighbour = row.split(" | ")[0], row.split(" | ")[1]
    assert "**play**" in query and "**play**" in neighbour and query.split(": ", 1)[1] != neighbour.split(") ", 1)[1]
    with pytest.raises(SystemExit, match="'absent' does not occur in the corpus"):
        main(["--word", "absent", "--corpus", str(corpus), "--model", str(tmp_path / "model")])
