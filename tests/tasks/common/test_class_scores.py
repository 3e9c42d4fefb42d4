"""A classifier's accuracy, per gold class and overall, with its confusion matrix, on a hand-worked case."""

import pytest

from tasks.common.class_scores import class_scores


def test_accuracy_per_gold_class_and_the_confusion_matrix_by_hand():
    labels = ("very negative", "negative", "neutral")
    gold = [0, 0, 1, 1, 1, 2, 2, 2]
    predictions = [1, 1, 1, 1, 2, 2, 2, 0]  # 'very negative' never right: a stalled class
    s = class_scores(gold, predictions, labels)
    assert s["accuracy"] == pytest.approx(100 * 4 / 8)
    assert s["per_class_accuracy"] == pytest.approx({"very negative": 0.0, "negative": 200 / 3, "neutral": 200 / 3})
    assert s["confusion_matrix"] == {"labels": list(labels), "rows_gold": [[0, 2, 0], [0, 2, 1], [1, 0, 2]]}


def test_predictions_for_other_examples_than_the_gold_are_refused():
    with pytest.raises(ValueError):
        class_scores([0, 1], [0], ("a", "b"))
