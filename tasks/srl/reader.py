"""SRL readers. Every (sentence, predicate) pair becomes one example: ``tokens``, ``predicate``
(index) and BIO ``tags`` over the tokens (``B-V`` marks the predicate).

* CoNLL-2012 ``*gold_conll`` (Pradhan et al. 2012): columns 12..n-1 hold one bracketed argument
  column per predicate, e.g. ``(ARG0*``, ``*``, ``*)``, ``(V*)``. Also the Hugging Face
  ``conll2012_ontonotesv5`` data (``srl_frames`` already in BIO).
* Universal PropBank CoNLL-U Plus (Akbik et al. 2015): column 11 is the predicate sense, then one
  column per predicate with the role of each argument's head word; each argument becomes a one-token
  span. The predicate is the token marked ``V`` (split predicates carry the sense on another token);
  a column without ``V`` uses the sense token and is counted. Multiword-token ranges and empty nodes
  are skipped and counted.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import text_lines


def _dataset(rows: list[dict]) -> datasets.Dataset:
    return datasets.Dataset.from_dict({k: [r[k] for r in rows] for k in ("tokens", "predicate", "tags", "sentence")})


def brackets_to_bio(column: list[str], where: str) -> list[str]:
    tags, open_label = [], None
    for i, cell in enumerate(column):
        if cell.startswith("("):
            if open_label is not None:
                raise DataFormatError(f"{where}: nested argument at token {i + 1}")
            label = cell[1:].split("*")[0]
            tags.append("B-" + label)
            open_label = None if cell.endswith(")") else label
        elif cell.startswith("*"):
            tags.append("I-" + open_label if open_label else "O")
            if cell.endswith(")"):
                if open_label is None:
                    raise DataFormatError(f"{where}: ')' without an open argument at token {i + 1}")
                open_label = None
        else:
            raise DataFormatError(f"{where}: bad argument cell {cell!r} at token {i + 1}")
    if open_label is not None:
        raise DataFormatError(f"{where}: argument {open_label} never closed")
    return tags


def read_conll2012_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    rows, stats = [], {"sentences": 0, "predicates": 0, "sentences_without_predicate": 0}
    block, start = [], 0

    def flush():
        if not block:
            return
        where = f"{path}:{start}"
        widths = {len(c) for _, c in block}
        if len(widths) != 1:
            raise DataFormatError(f"{where}: rows of this sentence have different column counts {sorted(widths)}")
        tokens = [c[3] for _, c in block]
        n_pred = len(block[0][1]) - 12
        stats["sentences"] += 1
        if n_pred <= 0:
            stats["sentences_without_predicate"] += 1
        for p in range(n_pred):
            tags = brackets_to_bio([c[11 + p] for _, c in block], f"{where} (predicate column {p + 1})")
            if "B-V" not in tags:
                raise DataFormatError(f"{where}: predicate column {p + 1} has no (V*)")
            rows.append(
                {"tokens": tokens, "predicate": tags.index("B-V"), "tags": tags, "sentence": stats["sentences"] - 1}
            )
            stats["predicates"] += 1
        block.clear()

    for lineno, line in text_lines(path):
        if line.startswith("#"):
            flush()
            continue
        cols = line.split()
        if not cols:
            flush()
            continue
        if len(cols) < 12:
            raise DataFormatError(f"{path}:{lineno}: expected at least 12 columns, got {len(cols)}")
        if not block:
            start = lineno
        block.append((lineno, cols))
    flush()
    return _dataset(rows), stats


def read_conllu_propbank_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    rows = []
    stats = {
        "sentences": 0,
        "predicates": 0,
        "sentences_without_predicate": 0,
        "predicates_without_V": 0,
        "unannotated_sentences_skipped": 0,
        "multiword_ranges_skipped": 0,
        "empty_nodes_skipped": 0,
    }
    block, start, unannotated = [], 0, False

    def flush():
        nonlocal unannotated
        if not block:
            return
        if unannotated:  # "# propbank = no-up": the sentence was never annotated
            stats["unannotated_sentences_skipped"] += 1
            block.clear()
            unannotated = False
            return
        tokens = [c[1] for c in block]
        predicates = [i for i, c in enumerate(block) if c[10] not in ("_", "")]
        n_cols = {len(c) for c in block}
        if n_cols != {11 + len(predicates)}:
            raise DataFormatError(f"{path}:{start}: {len(predicates)} predicates but {sorted(n_cols)} columns")
        stats["sentences"] += 1
        stats["sentences_without_predicate"] += not predicates
        for p, sense_index in enumerate(predicates):
            column = [c[11 + p] for c in block]
            # the V is usually on the sense-bearing token; split predicates ("two - timing") put it elsewhere
            pred_index = column.index("V") if "V" in column else sense_index
            if "V" not in column:
                stats["predicates_without_V"] += 1
                column[pred_index] = "V"
            tags = ["O" if r == "_" else "B-" + r for r in column]
            rows.append({"tokens": tokens, "predicate": pred_index, "tags": tags, "sentence": stats["sentences"] - 1})
            stats["predicates"] += 1
        block.clear()

    for lineno, line in text_lines(path):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            continue
        if line.startswith("#"):
            unannotated |= line.replace(" ", "") == "#propbank=no-up"
            continue
        cols = line.split("\t")
        if "-" in cols[0]:
            stats["multiword_ranges_skipped"] += 1
            continue
        if "." in cols[0]:
            stats["empty_nodes_skipped"] += 1
            continue
        while len(cols) > 11 and cols[-1] == "":  # sentences without predicates end in a tab
            cols.pop()
        if len(cols) < 11:
            raise DataFormatError(f"{path}:{lineno}: expected at least 11 tab-separated columns, got {len(cols)}")
        if not block:
            start = lineno
        block.append(cols)
    flush()
    if not rows:
        raise DataFormatError(f"{path}: no predicates")
    return _dataset(rows), stats


def from_hf_conll2012(ds: datasets.Dataset) -> datasets.Dataset:
    """The OntoNotes hub copy (documents of ``sentences`` with ``words`` and ``srl_frames``) as the
    reader's rows: one per predicate."""
    rows, n = [], 0
    for doc in ds:
        for sentence in doc["sentences"]:
            for frame in sentence["srl_frames"]:
                if "B-V" in frame["frames"]:
                    rows.append(
                        {
                            "tokens": sentence["words"],
                            "predicate": frame["frames"].index("B-V"),
                            "tags": frame["frames"],
                            "sentence": n,
                        }
                    )
            n += 1
    return _dataset(rows)
