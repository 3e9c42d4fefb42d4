"""The POS probe's data (Peters et al. 2018 §5.3, Table 6): ``token<TAB>tag`` lines, a blank line
between sentences (the PTB WSJ sample here; the paper used the full WSJ)."""

from __future__ import annotations

from pathlib import Path

from suite_common.errors import DataError

from ..common.text_files import text_lines


def read_tagged(path: str | Path) -> tuple[list[list[str]], list[list[str]]]:
    sentences, tags, s, t = [], [], [], []
    for lineno, line in text_lines(path):
        line = line.rstrip("\n")
        if not line.strip():
            if s:
                sentences.append(s)
                tags.append(t)
            s, t = [], []
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0] or not cols[1]:
            raise DataError(f"{path}:{lineno}: expected 'token<TAB>tag'")
        s.append(cols[0])
        t.append(cols[1])
    if s:
        sentences.append(s)
        tags.append(t)
    if not sentences:
        raise DataError(f"{path}: no sentences")
    return sentences, tags
