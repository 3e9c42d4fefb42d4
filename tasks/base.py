"""What the one trainer needs from a task (Peters et al. 2018 §3.3): its data splits, the sentences
the biLM reads, batches that carry their contextual layers, a model, predictions, a dev metric
(higher is better) and prediction files in the official scorer's format.

* Readers: one registry, ``readers`` (``data.format`` -> ``reader(path, task_cfg, split)``
  returning ``(Dataset, stats)``; the first entry is the default format), plus ``read_hf`` for
  the Hugging Face copy.
* Suspicious but readable input (answers realigned, items dropped) is counted in ``data_stats``;
  the keys in ``NOTICES`` are warned in the run's output and listed in its record.
* State: what a trained model needs besides its weights (the word vocabulary and label list) is
  declared in ``STATE`` and set by ``build_vocab`` or ``load_state`` alone; ``_index`` derives
  lookups from it.
* Layers: a ``TaskSplit`` pairs a split's examples with the ``LayerSource`` of its sentences;
  ``make_batch`` puts each side's encoder layers (biLM or Transformer) into the batch (``layers``, ``layer_mask``),
  where the model's own ``ElmoFeatures`` mix them inside ``forward``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import datasets
import numpy as np
import torch
from torch import nn

from elmo_core.characters import batch_to_ids
from encoders.activation_cache import LayerSource
from suite_common.bounded_files import data_file_problem
from suite_common.errors import ConfigError, DataError

from .common.data_files import data_files
from .common.folds import fold_splits

PAD, UNK = "<pad>", "<unk>"

Reader = Callable[[Path, object, str], tuple[datasets.Dataset, dict]]


@dataclass
class TaskSplit:
    """One split: its examples and, when ELMo is used, the layers of ``task.sentences(examples)``."""

    name: str
    examples: datasets.Dataset
    layers: LayerSource | None = None

    def __len__(self) -> int:
        return len(self.examples)


def index_batches(n: int, batch_size: int, shuffle: bool, rng=None) -> list[list[int]]:
    order = list(range(n))
    if shuffle:
        rng.shuffle(order)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def set_column(ds: datasets.Dataset, name: str, values: list) -> datasets.Dataset:
    """``ds`` with column ``name`` holding ``values`` (replaced if present: a task's ``prepare`` runs
    again after subsampling)."""
    return (ds.remove_columns(name) if name in ds.column_names else ds).add_column(name, values)


class Task:
    name: str = ""
    metric: str = ""
    readers: dict[str, Reader] = {}
    vocab_columns: tuple[str, ...] | None = None  # columns counted for the vocabulary (default: sentences())
    STATE = ("words", "labels")
    VERSION = 1  # raise when a change to the task's code changes its results: part of every run's identity
    NOTICES: tuple[str, ...] = ()  # reader counts (data_stats keys) of suspicious input, warned when not zero
    FOLD_UNIT: str | None = None  # the column whose value a cross-validation fold keeps whole (data.folds); None: a row
    COUNTS: dict[str, str] = {}  # what its readers' counts mean, where experiments.time_estimate.COUNTS does not say

    def __init__(self, cfg):
        self.cfg = cfg  # the task's config node (cfg.task)
        self.words: list[str] = []
        self.labels: list[str] = []
        self.data_stats: dict = {}
        self._index()

    # data ------------------------------------------------------------------------------------
    def load_splits(self, data_cfg) -> dict[str, datasets.Dataset]:
        """train/dev/test from ``data.<split>_path``, or ``data.dir``/``data.<split>_file``, or else the
        Hugging Face dataset (``data.hf_split``); counts of skipped items go to ``self.data_stats``. With
        ``data.folds``, train and dev are one cross-validation fold's (``common.folds``)."""
        splits, self.data_stats = {}, {}
        files = data_files(data_cfg)
        for split in ("train", "dev", "test"):
            path = files.get(split)
            if path:
                splits[split], self.data_stats[split] = self.read_file(path, data_cfg, split)
            elif not data_cfg.dir and (getattr(data_cfg, "hf_split", None) or {}).get(split):
                splits[split], self.data_stats[split] = self.read_hf(data_cfg, data_cfg.hf_split[split])
        if getattr(data_cfg, "folds", None) is not None:  # a cross-validation fold: train and dev pooled and cut
            splits = fold_splits(splits, data_cfg.folds, data_cfg.fold, self.FOLD_UNIT)
        return {split: self.prepare(ds, split) for split, ds in splits.items()}

    def read_file(self, path, data_cfg, split: str) -> tuple[datasets.Dataset, dict]:
        fmt = getattr(data_cfg, "format", None) or next(iter(self.readers), None)
        if fmt not in self.readers:
            raise ConfigError(f"data.format must be one of {sorted(self.readers)}, got {fmt!r}")
        problem = data_file_problem(path)
        if problem:
            key = f"data.{split}_path" if getattr(data_cfg, f"{split}_path", None) else f"data.dir/data.{split}_file"
            hint = ""
            if problem == "no such file" and not Path(path).is_absolute():  # read from the working directory
                hint = (
                    f"; relative to the working directory {Path.cwd()}: run from the checkout, or set "
                    "ELMO_SHARED=/path/to/shared (the folder holding data/), or give an absolute path"
                )
            raise DataError(f"{path}: {problem} ({key}){hint}")
        return self.readers[fmt](path, self.cfg, split)

    def data_warnings(self) -> list[str]:
        """One line per split and suspicious count (``NOTICES``) that is not zero."""
        return [
            f"{self.name}/{split}: {stats[key]} {key.replace('_', ' ')}"
            for split, stats in self.data_stats.items()
            for key in self.NOTICES
            if stats.get(key)
        ]

    def read_hf(self, data_cfg, split: str) -> tuple[datasets.Dataset, dict]:
        raise ConfigError(f"task {self.name} has no Hugging Face source; set source=local or data.dir=...")

    def prepare(self, ds: datasets.Dataset, split: str) -> datasets.Dataset:
        """Per-split additions (e.g. which biLM row each example reads)."""
        return ds

    def sentences(self, ds: datasets.Dataset) -> list[list[str]]:
        """The token sequences the biLM reads (by default one per example)."""
        return list(ds["tokens"])

    def bilm_rows(self, ds: datasets.Dataset, indices: list[int]) -> list[int]:
        """Which of ``sentences(ds)`` each example reads (several examples may share one)."""
        return indices

    def bilm_sides(self, ds: datasets.Dataset, indices: list[int]) -> dict[str | None, list[int]]:
        """biLM rows per input side: one unnamed side by default; two-text tasks (QA, NLI) name theirs."""
        return {None: self.bilm_rows(ds, indices)}

    def batches(self, ds: datasets.Dataset, batch_size: int, shuffle: bool, rng=None) -> list[list[int]]:
        return index_batches(len(ds), batch_size, shuffle, rng)

    # state -----------------------------------------------------------------------------------
    def build_vocab(self, train: datasets.Dataset) -> None:
        """Words (count >= ``model.min_word_count``) and labels of the training split."""
        texts = (s for col in self.vocab_columns for s in train[col]) if self.vocab_columns else self.sentences(train)
        counts = Counter(self.word_key(t) for s in texts for t in s)
        self.words = [PAD, UNK] + sorted(w for w, c in counts.items() if c >= self.cfg.model.min_word_count)
        self.labels = self.label_list(train)
        self._index()

    def word_key(self, token: str) -> str:
        """The word-embedding row a token reads: the token, or the token lowercased with
        ``task.model.lowercase_words`` (the case is then the character CNN's alone, as with the lowercased
        Senna and GloVe vectors of the paper's NER baseline and allennlp-models' ``ner_elmo``)."""
        return token.lower() if self.lowercase_words else token

    @cached_property
    def lowercase_words(self) -> bool:
        return bool(getattr(self.cfg.model, "lowercase_words", False))  # a setting of NER's model only

    def label_list(self, train: datasets.Dataset) -> list[str]:
        """The output labels a model predicts (tagging tasks); none by default."""
        return []

    def _index(self) -> None:
        """Lookups derived from the state."""
        self.word_index = {w: i for i, w in enumerate(self.words)}
        self.label_index = {label: i for i, label in enumerate(self.labels)}

    def state(self) -> dict:
        """What a trained model needs besides its weights, for mode=evaluate."""
        return {k: list(getattr(self, k)) for k in self.STATE}

    def load_state(self, state: dict) -> None:
        for k in self.STATE:
            setattr(self, k, list(state.get(k, [])))
        self._index()

    # batches ---------------------------------------------------------------------------------
    def token_inputs(self, sentences: list[list[str]]) -> dict[str, torch.Tensor]:
        T = max(len(s) for s in sentences)
        ids = torch.zeros(len(sentences), T, dtype=torch.long)
        for i, s in enumerate(sentences):
            ids[i, : len(s)] = torch.tensor([self.word_index.get(self.word_key(t), 1) for t in s])
        return {
            "word_ids": ids,
            "char_ids": batch_to_ids(sentences),
            "mask": torch.arange(T).unsqueeze(0) < torch.tensor([len(s) for s in sentences]).unsqueeze(1),
        }

    def batch(self, ds: datasets.Dataset, indices: list[int]) -> dict:
        """The task's tensors for these examples (without biLM layers)."""
        raise NotImplementedError

    def make_batch(self, split: TaskSplit, indices: list[int]) -> dict:
        """``batch`` plus, per input side, the encoder's layers of its tokens (``layers``, ``layer_mask``)."""
        batch = self.batch(split.examples, indices)
        if split.layers is None:
            return batch
        for side, rows in self.bilm_sides(split.examples, indices).items():
            target = batch if side is None else batch[side]
            layers, mask = split.layers.batch(rows)
            if not torch.equal(mask, target["mask"]):
                raise DataError(
                    f"{self.name}/{split.name}: biLM layers do not line up with the task's tokens (a stale cache?)"
                )
            target["layers"], target["layer_mask"] = layers, mask
        return batch

    # model and evaluation --------------------------------------------------------------------
    def build_model(self, features) -> nn.Module:
        raise NotImplementedError

    def predict(self, model: nn.Module, batch: dict) -> list:
        raise NotImplementedError

    def score(self, ds: datasets.Dataset, predictions: list) -> dict:
        raise NotImplementedError

    def write_predictions(self, ds: datasets.Dataset, predictions: list, prefix: Path) -> Path:
        """Write predictions in the format of the task's official scorer; returns the file."""
        raise NotImplementedError

    # resampling units (the report's paired bootstrap) ------------------------------------------
    def unit_counts(self, ds: datasets.Dataset, predictions: list) -> tuple[list, np.ndarray]:
        """The units a bootstrap resamples (examples here; sentences, questions or documents in the
        tasks that override it) and, per unit, counts whose column sums give the corpus metric
        through ``metric_of_sums``: here accuracy, (correct, 1) per example."""
        gold = list(ds["label"])
        correct = [int(g == p) for g, p in zip(gold, predictions, strict=True)]
        return list(range(len(gold))), np.array([[c, 1] for c in correct], dtype=float).reshape(-1, 2)

    @staticmethod
    def metric_of_sums(sums: np.ndarray) -> np.ndarray:
        """The metric (in %) of summed unit counts; ``sums[..., k]`` is column k (any leading shape)."""
        return 100 * sums[..., 0] / np.maximum(sums[..., 1], 1)

    # raw input (mode=predict, experiments.predictor) -----------------------------------------------
    def read_raw(self, lines: list[str], where: str) -> datasets.Dataset:
        """Examples without labels from raw text lines (blank lines already dropped; ``line`` column:
        the 1-based line number). Tasks that cannot take raw text say so."""
        raise ConfigError(
            f"task {self.name} has no mode=predict on raw text (ner, sst, nli, srl and qa have); "
            "use mode=evaluate with a file in its data format"
        )

    def raw_output(self, row: dict, prediction) -> dict:
        """One prediction as a JSON object (``mode=predict`` writes one per input line)."""
        raise NotImplementedError
