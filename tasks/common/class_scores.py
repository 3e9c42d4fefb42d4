"""A classifier's dev scores (SST-5 and SNLI/SICK, Peters et al. 2018 §5.1 and appendix A: accuracy),
with the accuracy per gold class and the confusion matrix beside it: what shows a stalled run, one that
never predicts a class right (Table 1's notes name such runs)."""

from __future__ import annotations

from collections.abc import Sequence


def class_scores(gold: Sequence[int], predictions: Sequence[int], labels: Sequence[str]) -> dict:
    """``accuracy`` (percent), ``per_class_accuracy`` (percent of each gold class predicted right; 0 for a
    class the dev set lacks) and ``confusion_matrix`` (``rows_gold[g][p]``: gold ``g`` predicted ``p``)."""
    confusion = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, predictions, strict=True):
        confusion[g][p] += 1
    per_class = {name: 100 * confusion[k][k] / max(1, sum(confusion[k])) for k, name in enumerate(labels)}
    return {
        "accuracy": 100 * sum(confusion[k][k] for k in range(len(labels))) / len(gold),
        "per_class_accuracy": per_class,
        "confusion_matrix": {"labels": list(labels), "rows_gold": confusion},
    }
