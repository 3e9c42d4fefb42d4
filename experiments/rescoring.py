"""Every number in a table recomputed from what the model predicted (Peters et al. 2018 §4's metrics:
span F1 for NER and SRL, SQuAD F1, accuracy, CoNLL F1 for coreference).

A record made since predictions are kept names its ``dev_predictions.json.gz`` with its SHA-256
(``experiments.predictions_file``). ``rescore`` reads it, reads the dev file the run read (its
SHA-256 is in the record's identity), scores the predictions with the task's own metric code, and
returns the metric with the per-unit counts (sentences, questions, documents) that the paired
bootstrap resamples. ``rescoring_differences`` is what the report's cell rules ask: a record whose
recorded dev metric is not what its predictions score, or whose predictions file is missing or
altered, never joins a cell. Records made before predictions were kept cannot be checked: they are
counted as not re-scored and give intervals over seeds only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from experiments.predictions_file import entry_path, read_predictions_file
from experiments.record import Record
from suite_common.errors import SuiteError
from suite_common.hashing import content_sha256
from suite_common.typed_config import plain
from tasks.common.data_files import data_files
from tasks.common.folds import fold_splits
from tasks.registry import task_class

TOLERANCE = 1e-6  # the same code on the same predictions gives the same float; a record keeps full precision


@dataclass(frozen=True)
class Rescored:
    """A record's dev metric recomputed from its predictions, and the counts behind it."""

    value: float
    units: tuple  # the resampling units (sentence indices, question ids, document keys) in dev-file order
    counts: np.ndarray  # [units, k]: summed over units, ``metric_of_sums`` gives ``value``
    task: str
    per_layer: dict | None = None  # a probe's accuracy per encoder layer (Tables 5-6), from the same predictions
    per_class: dict | None = None  # a classifier's accuracy per gold class (a stalled run has a 0), likewise

    def metric_of_sums(self, sums: np.ndarray) -> np.ndarray:
        return task_class(self.task).metric_of_sums(sums)


class NotRescored(Exception):
    """The record cannot be checked here (no predictions kept, or its dev file is not on this machine)."""


class RescoringFailed(Exception):
    """The record's predictions are missing, altered, or score another number than the record says."""


_SPLITS: dict[tuple, tuple] = {}


def _dev_split(r: Record, settings: tuple, dev_path: Path, train_path: Path | None = None):
    """The task and its dev split, built once per ``settings`` (the task's and data's, as text) from the
    record's typed configuration; a cross-validation fold's from both files."""
    key = (*settings, str(dev_path), str(train_path))
    if key not in _SPLITS:
        run = r.run
        task = task_class(r.task)(run.task)
        ds = _read(task, run.data, settings, dev_path, "dev")
        if getattr(run.data, "folds", None) is not None:
            train = _read(task, run.data, settings, train_path, "train")
            ds = fold_splits({"train": train, "dev": ds}, run.data.folds, run.data.fold, task.FOLD_UNIT)["dev"]
        _SPLITS[key] = (task, task.prepare(ds, "dev"))
    return _SPLITS[key]


_FILES: dict[tuple, object] = {}


def _read(task, data_cfg, settings: tuple, path: Path, split: str):
    """A data file as the task reads it, once per report: the folds of a cross-validation (which differ
    only in ``data.fold``) read the same two files."""
    data = json.loads(settings[3])
    data.pop("fold", None)
    key = (settings[0], settings[2], json.dumps(data, sort_keys=True), str(path), split)
    if key not in _FILES:
        _FILES[key] = task.read_file(path, data_cfg, split)[0]
    return _FILES[key]


REPO = Path(__file__).resolve().parents[1]


def dev_file(r: Record, split: str = "dev") -> Path:
    """The dev file (or ``split``'s) the record's run read, here: its configured path (from the working
    directory, else from the checkout, else below ``ELMO_SHARED`` for a path into ``shared/``), checked against
    the SHA-256 in its identity (``NotRescored`` when the file is not here or holds other bytes)."""
    path = data_files(r.run.data).get(split)
    wanted = r.data_hashes.get(split)
    if path is None or wanted is None:
        raise NotRescored(f"no local {split} file recorded")
    candidates = [Path(path), REPO / path]
    if os.environ.get("ELMO_SHARED") and "shared" in Path(path).parts:
        parts = Path(path).parts
        candidates.append(Path(os.environ["ELMO_SHARED"]).joinpath(*parts[parts.index("shared") + 1 :]))
    found = [(p, content_sha256(p)) for p in candidates]
    for p, sha in found:
        if sha == wanted:
            return p
    if all(sha == "missing" for _, sha in found):
        raise NotRescored(f"its {split} file {path} is not here")
    raise NotRescored(f"{path} differs from the {split} file the run read")


def rescore(r: Record) -> Rescored:
    """The record's dev metric from its kept predictions; ``NotRescored`` when it has none or its dev
    file is not here, ``RescoringFailed`` when its predictions cannot be read as its record says."""
    entry = r.predictions.get("dev") if isinstance(r.predictions, dict) else None
    if not entry:
        raise NotRescored("made before predictions were kept")
    if r.path is None:
        raise NotRescored("a record read from no file")
    try:
        path = entry_path(r.path.parent, entry)  # a plain file name in the record's own directory
    except SuiteError as e:
        raise RescoringFailed(str(e)) from None
    key = (str(path), *(json.dumps(x, sort_keys=True) for x in (entry, r.task, r.metric, r.config, r.identity)))
    if key not in _RESCORED:  # asked of one record several times a report: its files are read and checked once
        _RESCORED[key] = _rescored(r, path, entry)
    return _RESCORED[key]


_RESCORED: dict[tuple, Rescored] = {}


def _rescored(r: Record, predictions_path: Path, entry: dict) -> Rescored:
    dev = dev_file(r)
    train = (
        dev_file(r, "train") if getattr(r.run.data, "folds", None) is not None else None
    )  # a fold: its dev is part of both
    try:
        predictions = read_predictions_file(predictions_path, entry)
    except SuiteError as e:
        raise RescoringFailed(str(e)) from None
    settings = (r.task, r.metric, *(json.dumps(plain(group), sort_keys=True) for group in (r.run.task, r.run.data)))
    key = (entry["sha256"], *settings, str(dev), str(train))  # the bytes were just checked
    if key not in _SCORED:  # a run reused under another name (Table 1's 'elmo' as Table 3's 'both') scores once
        try:
            _SCORED[key] = _score(predictions, r, settings, dev, train)
        except SuiteError as e:  # a task or setting that does not exist here
            raise RescoringFailed(str(e)) from None
    return _SCORED[key]


_SCORED: dict[tuple, Rescored] = {}


def _score(predictions: list, r: Record, settings: tuple, dev: Path, train: Path | None = None) -> Rescored:
    task, ds = _dev_split(r, settings, dev, train)
    if len(predictions) != len(ds):
        raise RescoringFailed(f"{len(predictions)} predictions for {len(ds)} dev examples")
    try:
        scores = task.score(ds, predictions)
        value = float(scores[r.metric])
        units, counts = task.unit_counts(ds, predictions)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise RescoringFailed(f"its predictions do not fit the dev file ({type(e).__name__}: {e})") from None
    per_layer, per_class = scores.get("accuracy_per_layer"), scores.get("per_class_accuracy")
    return Rescored(
        value=value, units=tuple(units), counts=counts, task=r.task, per_layer=per_layer, per_class=per_class
    )


def rescoring_differences(r: Record) -> dict[str, tuple]:
    """``{what: (recorded, found)}`` when the record's predictions do not back its dev metric; empty
    when they do or when it cannot be checked here (``rescoring_status`` says which)."""
    try:
        found = rescore(r)
    except NotRescored:
        return {}
    except RescoringFailed as e:
        return {"dev predictions": ("as recorded", str(e))}
    if (
        not isinstance(r.value, (int, float))
        or isinstance(r.value, bool)
        or not abs(found.value - r.value) <= TOLERANCE
    ):
        return {f"dev.{r.metric} (re-scored from its predictions)": (r.value, round(found.value, 4))}
    recorded = r.dev.get("accuracy_per_layer") if isinstance(r.dev, dict) else None
    if found.per_layer is not None and not _same_per_layer(recorded, found.per_layer):
        found_rounded = {layer: round(v, 4) for layer, v in found.per_layer.items()}
        return {"dev.accuracy_per_layer (re-scored from its predictions)": (recorded, found_rounded)}
    return {}


def _same_per_layer(recorded, found: dict) -> bool:
    """A probe's recorded accuracy per layer is what its predictions give, layer for layer."""
    if not isinstance(recorded, dict) or set(recorded) != set(found):
        return False
    return all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and abs(found[k] - v) <= TOLERANCE
        for k, v in recorded.items()
    )


def rescoring_status(r: Record) -> str:
    """``re-scored`` (its predictions give its number), or why it is not."""
    try:
        rescore(r)
    except NotRescored as e:
        return f"not re-scored: {e}"
    except RescoringFailed as e:
        return f"refused: {e}"
    return "re-scored"
