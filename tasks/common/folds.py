"""Cross-validation folds over a task's training and dev examples (LitBank's authors evaluate coreference by
10-fold cross-validation; Peters et al. 2018 §5 compare on one dev set, which for 10 documents is too small to
tell a gain from noise). ``data.folds=K data.fold=k`` pools train and dev, cuts the pool's units (a task's
``FOLD_UNIT`` column: coreference's documents, whose parts are rows; else each row) into K folds of a fixed
permutation (sizes differ by at most one) and holds fold k out as the dev split; the rest is train.
"""

from __future__ import annotations

import numpy as np

from suite_common.errors import ConfigError

FOLD_SEED = 12345  # the permutation every fold of every run cuts from (a fold is the same units in each arm)


def folds_problem(folds, fold) -> str | None:
    """What is wrong with a ``data.folds``/``data.fold`` pair, or None (both unset is no cross-validation)."""
    if folds is None and fold is None:
        return None
    if folds is None or fold is None:
        return "data.folds and data.fold are given together (the number of folds and the one held out)"
    if not 0 <= fold < folds:
        return f"data.fold={fold}: must be from 0 to {folds - 1} with data.folds={folds}"
    return None


def held_out(units: list, folds: int, fold: int) -> set:
    """The units (in the pool's order of first appearance) that fold ``fold`` of ``folds`` holds out."""
    distinct = list(dict.fromkeys(units))
    if len(distinct) < folds:
        raise ConfigError(f"data.folds={folds}: the pooled train and dev splits hold only {len(distinct)} units")
    order = np.random.default_rng(FOLD_SEED).permutation(len(distinct))
    return {distinct[i] for i in np.array_split(order, folds)[fold]}


def fold_splits(splits: dict, folds: int, fold: int, unit: str | None = None) -> dict:
    """``splits`` with train and dev replaced by fold ``fold``'s: the other folds' rows as train, its own as
    dev, each in the pool's order (train's rows, then dev's). Any test split is left as it is."""
    import datasets

    if problem := folds_problem(folds, fold):
        raise ConfigError(problem)
    if "train" not in splits or "dev" not in splits:
        raise ConfigError("data.folds pools the train and dev splits: give both")
    train, dev = splits["train"], splits["dev"]
    pool = datasets.concatenate_datasets([train, dev if dev.features == train.features else dev.cast(train.features)])
    units = pool[unit][:] if unit else list(range(len(pool)))
    held = held_out(units, folds, fold)
    keep = {
        "train": [i for i, u in enumerate(units) if u not in held],
        "dev": [i for i, u in enumerate(units) if u in held],
    }
    quiet = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # a bar per fold for a copy of a few rows is noise
    try:  # the rows selected from the pool and copied out of it, not read row by row
        return {
            **splits,
            **{split: pool.select(rows).flatten_indices(keep_in_memory=True) for split, rows in keep.items()},
        }
    finally:
        if not quiet:
            datasets.enable_progress_bars()
