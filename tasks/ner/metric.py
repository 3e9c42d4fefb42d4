"""Span F1 for NER, as the CoNLL-2003 ``conlleval`` script counts it (seqeval's default mode,
which follows conlleval's chunk rules), over BIO/IOB2 tags."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from seqeval.metrics.sequence_labeling import get_entities


@lru_cache(maxsize=1 << 15)  # a few dev sets of sentences, and the predictions that differ from them
def _spans(tags: tuple[str, ...]) -> frozenset:
    """seqeval's chunks of one sentence's tags, ``(type, start, end)``: remembered, since a report scores
    the same dev sentences' gold tags (and many identical predictions) once per record."""
    return frozenset(get_entities(list(tags)))


def span_f1(gold: list[list[str]], pred: list[list[str]]) -> dict:
    """Span precision, recall and F1 (in %), overall and F1 per entity type: the numbers seqeval's
    ``precision_score``, ``recall_score`` and ``f1_score`` give, from one pass of its chunker
    (``get_entities``) over each sentence (a span never crosses a sentence, so counts add up)."""
    gold, pred = _rows(gold), _rows(pred)
    if len(gold) != len(pred) or any(len(g) != len(p) for g, p in zip(gold, pred)):
        raise ValueError("gold and predicted tag sequences differ in shape")
    counts: dict[str, list[int]] = {}  # type -> [correct, predicted, gold]
    for g, p in zip(gold, pred):
        g_spans, p_spans = _spans(tuple(g)), _spans(tuple(p))
        for spans, column in ((g_spans & p_spans, 0), (p_spans, 1), (g_spans, 2)):
            for label, *_ in spans:
                counts.setdefault(label, [0, 0, 0])[column] += 1
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    precision, recall, f1 = _scores(*total)
    gold_types = sorted(label for label, c in counts.items() if c[2])
    per_type = {label: round(100 * _scores(*counts[label])[2], 2) for label in gold_types}
    return {"f1": 100 * f1, "precision": 100 * precision, "recall": 100 * recall, "f1_per_type": per_type}


def _rows(column) -> list:
    """A column as a list, read at once (a ``datasets`` column is sliced whole, not formatted row by row)."""
    if isinstance(column, list):
        return column
    try:
        return list(column[:])
    except TypeError:  # an iterator
        return list(column)


def _scores(correct: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 as seqeval computes them (a zero denominator gives 0)."""
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    denominator = precision + recall
    return precision, recall, 2 * precision * recall / (denominator if denominator else 1.0)


def span_counts(gold: list[list[str]], pred: list[list[str]]) -> np.ndarray:
    """Per sentence: correct, predicted and gold spans (conlleval's chunks, as ``span_f1`` counts
    them); their sums give ``span_f1``'s F1 through ``f1_of_sums``."""
    rows = []
    for g, p in zip(_rows(gold), _rows(pred), strict=True):
        g_spans, p_spans = _spans(tuple(g)), _spans(tuple(p))
        rows.append((len(g_spans & p_spans), len(p_spans), len(g_spans)))
    return np.array(rows, dtype=float).reshape(-1, 3)


def f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Span F1 (in %) of summed (correct, predicted, gold) counts: 2c / (p + g)."""
    return 200 * sums[..., 0] / np.maximum(sums[..., 1] + sums[..., 2], 1)
