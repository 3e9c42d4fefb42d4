"""Entailment readers. Every example: ``pair_id``, ``premise``/``hypothesis`` tokens (the project
tokenizer, ``tasks/common/tokenizer.py``) and a ``label`` in (entailment, neutral, contradiction).

* SNLI / MultiNLI jsonl (``sentence1``, ``sentence2``, ``gold_label``, ``pairID``): pairs whose gold
  label is ``-`` (no annotator majority) are dropped and counted. Default source: Hugging Face ``snli``.
* SICK TSV with the header ``pair_ID sentence_A sentence_B entailment_label``.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import text_lines
from ..common.tokenizer import tokenize

LABELS = ["entailment", "neutral", "contradiction"]


def _dataset(rows: list[dict]) -> datasets.Dataset:
    return datasets.Dataset.from_dict({k: [r[k] for r in rows] for k in ("pair_id", "premise", "hypothesis", "label")})


def _row(pair_id, premise: str, hypothesis: str, label: str, where: str) -> dict:
    if label not in LABELS:
        raise DataFormatError(f"{where}: unknown label {label!r} (expected one of {LABELS})")
    p, h = tokenize(premise), tokenize(hypothesis)
    if not p or not h:
        raise DataFormatError(f"{where}: empty sentence")
    return {"pair_id": str(pair_id), "premise": p, "hypothesis": h, "label": LABELS.index(label)}


def read_snli_jsonl(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    rows, stats = [], {"pairs": 0, "no_gold_label_dropped": 0}
    for lineno, line in text_lines(path):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            ex = json.loads(line)
            label, s1, s2, pid = ex["gold_label"], ex["sentence1"], ex["sentence2"], ex.get("pairID", lineno)
        except json.JSONDecodeError as e:
            raise DataFormatError(f"{where}: not valid JSON ({e.msg})") from None
        except (KeyError, TypeError) as e:
            raise DataFormatError(f"{where}: missing field {e}") from None
        if label == "-":
            stats["no_gold_label_dropped"] += 1
            continue
        rows.append(_row(pid, s1, s2, label, where))
    stats["pairs"] = len(rows)
    if not rows:
        raise DataFormatError(f"{path}: no labelled pairs")
    return _dataset(rows), stats


def read_sick_tsv(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    rows = []
    need = ["pair_ID", "sentence_A", "sentence_B", "entailment_label"]
    header, col = None, {}
    for lineno, line in text_lines(path):
        if header is None:
            header = line.rstrip("\n").split("\t")
            if any(h not in header for h in need):
                raise DataFormatError(f"{path}:1: header must contain {need}, got {header}")
            col = {h: header.index(h) for h in need}
            continue
        if not line.strip():
            continue
        cells = line.rstrip("\n").split("\t")
        if len(cells) != len(header):
            raise DataFormatError(f"{path}:{lineno}: expected {len(header)} tab-separated fields, got {len(cells)}")
        rows.append(
            _row(
                cells[col["pair_ID"]],
                cells[col["sentence_A"]],
                cells[col["sentence_B"]],
                cells[col["entailment_label"]].lower(),
                f"{path}:{lineno}",
            )
        )
    if not rows:
        raise DataFormatError(f"{path}: no pairs")
    return _dataset(rows), {"pairs": len(rows)}


def from_hf_snli(ds: datasets.Dataset, name: str, split: str) -> tuple[datasets.Dataset, dict]:
    """The hub copy (``premise``, ``hypothesis``, ``label`` as class ids, -1 without a gold label)."""
    names = ds.features["label"].names
    rows, dropped = [], 0
    for i, ex in enumerate(ds):
        if ex["label"] < 0:  # "-" in the original files
            dropped += 1
            continue
        rows.append(_row(i, ex["premise"], ex["hypothesis"], names[ex["label"]], f"{name}[{split}]:{i}"))
    return _dataset(rows), {"pairs": len(rows), "no_gold_label_dropped": dropped}
