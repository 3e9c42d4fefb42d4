"""A task evaluated by cross-validation (LitBank's own protocol for coreference; Peters et al. 2018 Table 1's
coreference row, here on 90 LitBank documents): the baseline and ELMo trained on the same folds
(``+sweep=cross_validation task=coref``: ``data.folds``, ``data.fold``, ``trainer.keep=last``), each fold's
documents scored by the models that never saw them. The table has one row per fold (each arm's metric on it, the
gain) and one over every held-out unit pooled: each arm's metric of the summed counts, the gain with its paired
bootstrap over units (every unit held out once), and the mean of the per-fold gains with its t interval over folds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.record import Record
from experiments.rescoring import NotRescored, RescoringFailed, rescore

from .per_record import read as read_record
from .run_frame import Selection, fold_differences, fold_run, latest_per_fold, records, run_row
from .uncertainty import format_p, paired_bootstrap, seed_interval

ARMS = ("baseline", "elmo")
BOOT = "paired bootstrap over units: 95% interval, p"


def fold_records(roots: list[Path], select: Selection) -> list[tuple[Path, Record]]:
    """The cross-validation records that are their profile's cell but for the fold keys and kept their last
    epoch (``fold_differences``), one per fold, arm and seed (``latest_per_fold``)."""
    found = [(p, r) for p, r in records(roots, "results.json", select) if fold_run(r) and r.ablation in ARMS]
    return latest_per_fold([(p, r) for p, r in found if not fold_differences(r, select.accepted)])[0]


def cross_validation_table(roots: list[Path], select: Selection) -> tuple[pd.DataFrame, pd.DataFrame, str] | None:
    """The table's rows, the records behind them and its notes; None without fold records."""
    found = fold_records(roots, select)
    if not found:
        return None
    rows, notes, pooled_gains, sources = [], [], [], [run_row(p, r, r.ablation) for p, r in found]
    runs = pd.DataFrame([{**row, "fold": r.run.data.fold, "folds": r.run.data.folds}
                         for row, (_, r) in zip(sources, found)])  # fmt: skip
    for (task, folds, seed), group in runs.groupby(["task", "folds", "seed"], sort=True):
        by_arm = {arm: group[group.setting == arm].set_index("fold") for arm in ARMS}
        both = sorted(set(by_arm["baseline"].index) & set(by_arm["elmo"].index))
        for fold in range(folds):
            cells = [by_arm[arm].value.get(fold) for arm in ARMS]
            gain = f"{cells[1] - cells[0]:+.2f}" if fold in both else "—"
            shown = [f"{v:.2f}" if v is not None else "—" for v in cells]
            row = {"task": task, "fold": f"{fold} of {folds}", "seed": seed, "units": ""}
            rows.append({**row, "baseline": shown[0], "ELMo": shown[1], "gain": gain, BOOT: ""})
        pooled, note, numbers = _pooled(by_arm, both)
        rows.append({"task": task, "fold": f"all {len(both)} of {folds}", "seed": seed, **pooled})
        if numbers:
            pooled_gains.append({"task": task, "seed": seed, "folds": len(both), "of": folds, **numbers})
        gains = [by_arm["elmo"].value[f] - by_arm["baseline"].value[f] for f in both]
        spread = seed_interval(gains)
        notes.append(
            f"- {task}, seed {seed}: {len(both)} of {folds} folds have both arms{note}. Mean of the per-fold gains: "
            + (
                f"{spread.estimate:+.2f} [{spread.low:+.2f}, {spread.high:+.2f}] (95 % t interval over folds)."
                if spread
                else "one fold: no interval."
            )  # fmt: skip
        )
    frame = pd.DataFrame(rows)
    frame.attrs["pooled"] = pooled_gains  # for Table 1's notes (``pooled_gain_note``); not rendered
    return frame, pd.DataFrame(sources), "\n".join([NOTE, "", *notes])


def pooled_gain_note(g: dict) -> str:
    """One line for Table 1's notes: a task's gain over every held-out unit of its folds, and what it says."""
    where = f"all {g['of']} folds" if g["folds"] == g["of"] else f"{g['folds']} of {g['of']} folds so far"
    said = (
        "distinguishable from zero at 5 %"
        if g["low"] > 0 or g["high"] < 0
        else f"not distinguishable from zero at 5 %, which rules out a gain above {g['high']:+.2f} or below "
        f"{g['low']:+.2f}"
    )
    return (
        f"{g['task']} by cross-validation (`cross_validation.md`, seed {g['seed']}): over the {g['units']} held-out "
        f"units of {where}, {g['baseline']:.2f} -> {g['elmo']:.2f}, gain {g['gain']:+.2f} (paired bootstrap over "
        f"units: [{g['low']:+.2f}, {g['high']:+.2f}], {format_p(g['p'])}): {said}."
    )


def _pooled(by_arm: dict, folds: list[int]) -> tuple[dict, str, dict | None]:
    """Each arm's metric over the pooled held-out units of ``folds`` and the paired bootstrap of the gain."""
    empty = {
        "units": "—",
        "baseline": "—",
        "ELMo": "—",
        "gain": "—",
        "paired bootstrap over units: 95% interval, p": "—",
    }
    try:
        scored = {arm: [rescore(read_record(Path(by_arm[arm].path[f]))) for f in folds] for arm in ARMS}
    except (NotRescored, RescoringFailed) as e:
        return empty, f"; not pooled ({e})", None
    if not folds:
        return empty, "", None
    if sum(len(s.units) for s in scored["baseline"]) < 2:  # a bootstrap resamples two units or more
        return empty, "; not pooled (one held-out unit)", None
    if [s.units for s in scored["baseline"]] != [s.units for s in scored["elmo"]]:
        return empty, "; not pooled (the arms' folds hold different units)", None
    counts = {arm: np.concatenate([s.counts for s in scored[arm]]) for arm in ARMS}
    of_sums = scored["baseline"][0].metric_of_sums
    value = {arm: float(of_sums(counts[arm].sum(axis=0))) for arm in ARMS}
    boot = paired_bootstrap([counts["baseline"]], [counts["elmo"]], of_sums)
    return {
        "units": str(boot.units),
        "baseline": f"{value['baseline']:.2f}",
        "ELMo": f"{value['elmo']:.2f}",
        "gain": f"{value['elmo'] - value['baseline']:+.2f}",
        BOOT: f"[{boot.gain.low:+.2f}, {boot.gain.high:+.2f}], {format_p(boot.p_value)}",
    }, "", {"units": boot.units, **value, "gain": value["elmo"] - value["baseline"], "low": boot.gain.low,
            "high": boot.gain.high, "p": boot.p_value}  # fmt: skip


NOTE = (
    "Each fold's run trained on the other folds for its profile's fixed number of epochs and kept the last "
    "(`trainer.keep=last`): no choice was made on the held-out fold. A fold row is each arm's dev metric on that "
    "fold; the `all` row scores every held-out unit (a coreference document) pooled, each by the model of its "
    "fold, and resamples the units for the paired bootstrap."
)
