"""Span F1 for NER, as the CoNLL-2003 ``conlleval`` script counts it (seqeval's default mode,
which follows conlleval's chunk rules), over BIO/IOB2 tags."""

from __future__ import annotations

import numpy as np
from seqeval.metrics import f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities


def span_f1(gold: list[list[str]], pred: list[list[str]]) -> dict:
    if len(gold) != len(pred) or any(len(g) != len(p) for g, p in zip(gold, pred)):
        raise ValueError("gold and predicted tag sequences differ in shape")
    per_type = {}
    for label in sorted({e[0] for seq in gold for e in get_entities(seq)}):
        keep = lambda seq, label=label: [t if t != "O" and t[2:] == label else "O" for t in seq]
        g, p = [keep(s) for s in gold], [keep(s) for s in pred]
        per_type[label] = round(100 * f1_score(g, p), 2)
    return {
        "f1": 100 * f1_score(gold, pred),
        "precision": 100 * precision_score(gold, pred),
        "recall": 100 * recall_score(gold, pred),
        "f1_per_type": per_type,
    }


def span_counts(gold: list[list[str]], pred: list[list[str]]) -> np.ndarray:
    """Per sentence: correct, predicted and gold spans (conlleval's chunks, as ``span_f1`` counts
    them); their sums give ``span_f1``'s F1 through ``f1_of_sums``."""
    rows = []
    for g, p in zip(gold, pred, strict=True):
        g_spans, p_spans = set(get_entities(g)), set(get_entities(p))
        rows.append((len(g_spans & p_spans), len(p_spans), len(g_spans)))
    return np.array(rows, dtype=float).reshape(-1, 3)


def f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Span F1 (in %) of summed (correct, predicted, gold) counts: 2c / (p + g)."""
    return 200 * sums[..., 0] / np.maximum(sums[..., 1] + sums[..., 2], 1)
