"""Exact match and F1 as the official SQuAD v1.1 evaluation computes them: answers are normalized
(lower case, punctuation removed, the articles a/an/the removed, whitespace collapsed); each
prediction takes the maximum over the gold answers; the totals are means ×100."""

from __future__ import annotations

import functools
import re
import string
from collections import Counter

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@functools.lru_cache(maxsize=1 << 16)  # a dev set's gold answers, normalized once for every record and epoch scored
def normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def question_f1(prediction: str, answers: list[str]) -> float:
    """A question's F1: the best over its gold answers (as ``squad_scores`` counts it)."""
    return max(f1(prediction, g) for g in answers)


def squad_scores(predictions: dict[str, str], golds: dict[str, list[str]]) -> dict:
    """``predictions`` id -> text; ``golds`` id -> gold texts. Questions without a prediction count 0."""
    em = sum(max(exact_match(predictions.get(q, ""), g) for g in answers) for q, answers in golds.items())
    f = sum(max(f1(predictions.get(q, ""), g) for g in answers) for q, answers in golds.items())
    n = len(golds)
    return {
        "exact_match": 100 * em / n,
        "f1": 100 * f / n,
        "questions": n,
        "unanswered": sum(q not in predictions for q in golds),
    }
