"""Intervals over seeds and the paired bootstrap over dev examples, against hand-worked cases."""

import numpy as np
import pytest

from reporting.uncertainty import difference_interval, format_p, paired_bootstrap, seed_interval
from tasks.base import Task
from tasks.ner.metric import f1_of_sums


def accuracy_counts(correct):
    correct = np.asarray(correct, dtype=float)
    return np.stack([correct, np.ones_like(correct)], axis=1)


def test_seed_interval_is_students_t():
    # mean 2, standard error 1/sqrt(3), t(0.975, 2) = 4.302653: 2 ± 2.484137
    i = seed_interval([1.0, 2.0, 3.0])
    assert i.estimate == 2.0
    assert i.low == pytest.approx(2 - 2.484137, abs=1e-5) and i.high == pytest.approx(2 + 2.484137, abs=1e-5)
    assert seed_interval([5.0]) is None


def test_difference_interval_is_welchs():
    # equal variances 1 and n=3 each: se = sqrt(2/3), df = 4, t(0.975, 4) = 2.776445
    i = difference_interval([1.0, 2.0, 3.0], [3.0, 4.0, 5.0])
    assert i.estimate == 2.0
    half = 2.776445 * np.sqrt(2 / 3)
    assert i.low == pytest.approx(2 - half, abs=1e-5) and i.high == pytest.approx(2 + half, abs=1e-5)


def test_identical_arms_give_p_one_and_a_zero_interval():
    rng = np.random.default_rng(0)
    arm = [accuracy_counts(rng.random(200) < 0.7) for _ in range(2)]
    r = paired_bootstrap(arm, arm, Task.metric_of_sums, resamples=2000)
    assert r.p_value == 1.0
    assert r.gain.estimate == r.gain.low == r.gain.high == 0.0
    assert not r.significant


def test_a_known_difference_lies_in_its_interval_and_is_significant():
    # 400 examples: the reference is right on the first 240 (60 %), the other on those and 40 more (70 %)
    ref = accuracy_counts(np.arange(400) < 240)
    other = accuracy_counts(np.arange(400) < 280)
    r = paired_bootstrap([ref], [other], Task.metric_of_sums, resamples=4000)
    assert r.gain.estimate == pytest.approx(10.0)
    assert r.gain.low < 10.0 < r.gain.high
    # paired: the arms differ on exactly 40 examples, so a draw's gain is 100 * Binomial-like(40 of 400) / 400 > 0
    assert r.gain.low > 0 and r.p_value < 0.001 and r.significant
    assert r.relative.estimate == pytest.approx(100 * 10 / 40)  # error 40 % -> 30 %: a quarter of it removed


def test_a_difference_on_a_few_examples_is_not_significant():
    ref = accuracy_counts(np.arange(400) < 240)
    other = accuracy_counts((np.arange(400) < 241) & (np.arange(400) != 0))  # one example lost, one gained... net 0
    other[400 - 1, 0] = 1.0  # one more right: a gain of one example in 400
    r = paired_bootstrap([ref], [other], Task.metric_of_sums, resamples=4000)
    assert r.gain.estimate == pytest.approx(0.25)
    assert r.gain.low <= 0 <= r.gain.high and r.p_value > 0.05 and not r.significant


def test_the_bootstrap_is_deterministic():
    rng = np.random.default_rng(3)
    a = [accuracy_counts(rng.random(100) < 0.5)]
    b = [accuracy_counts(rng.random(100) < 0.6)]
    assert paired_bootstrap(a, b, Task.metric_of_sums, resamples=500) == paired_bootstrap(
        a, b, Task.metric_of_sums, resamples=500
    )


def test_span_f1_draws_resample_whole_sentences():
    # two sentences: the first has 1 gold span the reference misses and the other finds, the second 1 span both find.
    ref = np.array([[0, 0, 1], [1, 1, 1]], dtype=float)  # (correct, predicted, gold) per sentence
    other = np.array([[1, 1, 1], [1, 1, 1]], dtype=float)
    r = paired_bootstrap([ref], [other], f1_of_sums, resamples=2000)
    # a draw is a multiset of the two sentences: with k copies of the first of 2 draws, the reference's F1 is
    # 2(2-k)/((2-k)+2), the other's 100: the gains possible are 0 (k=0), 100-66.67 (k=1), 100 (k=2)
    assert r.gain.estimate == pytest.approx(100 - 200 / 3)
    possible = {0.0, 100 - 200 / 3, 100.0}
    assert any(r.gain.low == pytest.approx(v) for v in possible) and any(
        r.gain.high == pytest.approx(v) for v in possible
    )


def test_runs_on_different_dev_sets_are_refused():
    with pytest.raises(ValueError, match="different dev sets"):
        paired_bootstrap([accuracy_counts([1, 0])], [accuracy_counts([1, 0, 1])], Task.metric_of_sums)


def test_p_values_are_written_to_what_the_bootstrap_resolves():
    assert format_p(0.0) == "p<0.0002"
    assert format_p(0.0312) == "p=0.031"
    assert format_p(0.5) == "p=0.50"


def test_a_cell_interval_past_the_metrics_range_is_shown_clipped_and_says_so():
    from reporting.tables import mean_interval_n

    assert mean_interval_n([80.0, 82.0, 84.0]) == "82.00 [77.03, 86.97] (n=3)"  # inside 0-100: as computed
    assert mean_interval_n([75.15, 79.39]) == "77.27 [50.33, 100.00] (n=2; interval clipped to 0-100)"
    assert mean_interval_n([1.0, 4.0]).endswith("(n=2; interval clipped to 0-100)")
    assert mean_interval_n([1.0, 4.0]).split("[")[1].startswith("0.00,")
