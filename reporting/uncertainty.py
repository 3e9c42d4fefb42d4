"""How sure a table's numbers are (Peters et al. 2018 report ± over seeds for two tasks only, and no
test of a gain): a 95 % interval over seeds for every cell and every gain, and a paired bootstrap
over dev examples for every gain whose runs kept their predictions.

* ``seed_interval``: Student's t interval of a cell's mean over its seeds.
* ``difference_interval``: Welch's t interval of the difference of two cells' means (the seeds of
  two arms are not paired: seed s of the baseline and of ELMo share nothing but the number).
* ``paired_bootstrap``: the dev units (sentences, questions, documents: ``Task.unit_counts``)
  resampled with replacement, the same draw for both arms and every seed; on each draw the
  corpus-level metric of every run is recomputed from its summed unit counts, and the statistic is
  the gain of the arms' means over seeds. ``scipy.stats.bootstrap`` (percentile method, a fixed seed:
  the report is deterministic) gives the 95 % interval; the two-sided p-value is
  ``2 · min(P(gain* ≤ 0), P(gain* ≥ 0))`` over the bootstrap distribution, the smallest level at which
  the percentile interval excludes zero (identical arms: p = 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 0
BATCH = 250  # resamples evaluated at once: bounds the memory of the gathered unit counts


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class BootstrapResult:
    gain: Interval  # absolute gain (metric points)
    relative: Interval  # relative error reduction, in % of the baseline's error
    p_value: float
    units: int

    @property
    def significant(self) -> bool:
        return self.p_value < 1 - CONFIDENCE


def seed_interval(values) -> Interval | None:
    """Mean and 95 % t interval over seeds; None with fewer than two seeds."""
    v = np.asarray(list(values), dtype=float)
    if len(v) < 2:
        return None
    mean = float(v.mean())
    if np.all(v == v[0]):
        return Interval(mean, mean, mean)
    low, high = stats.t.interval(CONFIDENCE, len(v) - 1, loc=mean, scale=stats.sem(v))
    return Interval(mean, float(low), float(high))


def difference_interval(reference, other) -> Interval | None:
    """``mean(other) - mean(reference)`` with Welch's 95 % interval; None unless both have two seeds."""
    a, b = np.asarray(list(reference), dtype=float), np.asarray(list(other), dtype=float)
    if len(a) < 2 or len(b) < 2:
        return None
    diff = float(b.mean() - a.mean())
    if np.all(a == a[0]) and np.all(b == b[0]):
        return Interval(diff, diff, diff)
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(CONFIDENCE)
    return Interval(diff, float(ci.low), float(ci.high))


def paired_bootstrap(
    reference: list[np.ndarray],
    other: list[np.ndarray],
    metric_of_sums: Callable[[np.ndarray], np.ndarray],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> BootstrapResult:
    """Gain of ``other`` over ``reference`` (each a list of per-seed unit counts ``[units, k]`` on the
    same dev units), with its bootstrap interval, the relative error reduction's, and a p-value."""
    if not reference or not other:
        raise ValueError("each arm needs at least one run with predictions")
    n = {c.shape[0] for c in [*reference, *other]}
    if len(n) != 1:
        raise ValueError(f"the runs scored different dev sets ({sorted(n)} units)")
    units = n.pop()
    stacked = np.concatenate([*reference, *other], axis=1)  # [units, runs * k]: one product sums every run
    k, n_ref = reference[0].shape[1], len(reference)

    def gain_and_relative(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        # idx: [units] or [draws, units] resampled unit indices -> [2] or [2, draws]
        idx = np.atleast_2d(idx)
        draws = idx.shape[0]
        weights = np.bincount((idx + units * np.arange(draws)[:, None]).ravel(), minlength=draws * units)
        sums = (weights.reshape(draws, units).astype(float) @ stacked).reshape(draws, -1, k)  # [draws, runs, k]
        metrics = metric_of_sums(sums)  # [draws, runs]
        r, o = metrics[:, :n_ref].mean(axis=1), metrics[:, n_ref:].mean(axis=1)
        return np.stack([o - r, 100 * (o - r) / np.maximum(100 - r, 1e-9)])

    index = np.arange(units)
    res = stats.bootstrap(
        (index,),
        gain_and_relative,
        n_resamples=resamples,
        vectorized=True,
        batch=BATCH,
        confidence_level=CONFIDENCE,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    estimate = gain_and_relative(index)[:, 0]
    low, high = res.confidence_interval.low, res.confidence_interval.high
    draws = res.bootstrap_distribution[0]
    p = 1.0 if np.all(draws == 0) else min(1.0, 2 * min(np.mean(draws <= 0), np.mean(draws >= 0)))
    return BootstrapResult(
        gain=Interval(float(estimate[0]), float(low[0]), float(high[0])),
        relative=Interval(float(estimate[1]), float(low[1]), float(high[1])),
        p_value=float(p),
        units=units,
    )


def format_p(p: float, resamples: int = RESAMPLES) -> str:
    """A p-value as the bootstrap can resolve it: below 1/resamples it is written as a bound."""
    floor = 2 / resamples
    return f"p<{floor:.4f}".rstrip("0") if p < floor else f"p={p:.3f}" if p < 0.1 else f"p={p:.2f}"
