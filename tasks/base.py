"""What the one trainer needs from a task: its data splits, the sentences the biLM reads, a model,
batches, predictions and a dev metric (higher is better)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets
import torch
from torch import nn

from elmo_core.characters import batch_to_ids

PAD, UNK = "<pad>", "<unk>"


def index_batches(n: int, batch_size: int, shuffle: bool, rng=None) -> list[list[int]]:
    order = list(range(n))
    if shuffle:
        rng.shuffle(order)
    return [order[i: i + batch_size] for i in range(0, n, batch_size)]


def set_column(ds: datasets.Dataset, name: str, values: list) -> datasets.Dataset:
    """``ds`` with column ``name`` holding ``values`` (replaced if present: a task's ``prepare`` runs
    again after subsampling)."""
    return (ds.remove_columns(name) if name in ds.column_names else ds).add_column(name, values)


class Task:
    name: str = ""
    metric: str = ""

    def __init__(self, cfg):
        self.cfg = cfg  # the task's config node (cfg.task) plus data (cfg.data)

    # data ------------------------------------------------------------------------------------
    def load_splits(self, data_cfg) -> dict[str, datasets.Dataset]:
        """train/dev/test from ``data.<split>_path``, or ``data.dir``/``data.<split>_file``, or else the
        Hugging Face dataset (``data.hf_split``); counts of skipped items go to ``self.data_stats``."""
        splits, self.data_stats = {}, {}
        for split in ("train", "dev", "test"):
            filename = data_cfg.get(f"{split}_file")
            path = data_cfg.get(f"{split}_path") or (
                Path(data_cfg.dir) / filename if data_cfg.get("dir") and filename else None)
            if path:
                ds, self.data_stats[split] = self.read_file(path, data_cfg, split)
            elif not data_cfg.get("dir") and (data_cfg.get("hf_split") or {}).get(split):
                ds, self.data_stats[split] = self.read_hf(data_cfg, data_cfg.hf_split[split])
            else:
                continue
            splits[split] = self.prepare(ds, split)
        return splits

    readers: dict = {}  # data.format -> reader(path) -> (Dataset, stats), for tasks with several formats

    def read_file(self, path, data_cfg, split: str) -> tuple[datasets.Dataset, dict]:
        fmt = data_cfg.get("format", next(iter(self.readers), None))
        if fmt not in self.readers:
            raise SystemExit(f"error: data.format must be one of {sorted(self.readers)}, got {fmt!r}")
        return self.readers[fmt](path)

    def read_hf(self, data_cfg, split: str) -> tuple[datasets.Dataset, dict]:
        raise NotImplementedError

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

    def elmo_inputs(self, model: nn.Module, layers, ds: datasets.Dataset, indices: list[int], batch: dict) -> dict:
        """The ELMo representations (per position, per side) for a batch, from cached or live biLM layers."""
        if layers is None or model.features.elmo is None:
            return {}
        out = {}
        for side, rows in self.bilm_sides(ds, indices).items():
            bilm_layers, bilm_mask = layers.batch(rows)
            if not torch.equal(bilm_mask, (batch if side is None else batch[side])["mask"]):
                raise RuntimeError("biLM activations do not line up with the task's tokens (stale cache?)")
            if side is None:
                return model.features(bilm_layers, bilm_mask)
            out[side] = model.features(bilm_layers, bilm_mask)
        return out

    def batches(self, ds: datasets.Dataset, batch_size: int, shuffle: bool, rng=None) -> list[list[int]]:
        return index_batches(len(ds), batch_size, shuffle, rng)

    # model -----------------------------------------------------------------------------------
    def build_vocab(self, train: datasets.Dataset) -> None:
        counts = Counter(t for s in self.sentences(train) for t in s)
        self.words = [PAD, UNK] + sorted(w for w, c in counts.items() if c >= self.cfg.model.min_word_count)
        self.word_index = {w: i for i, w in enumerate(self.words)}

    def build_model(self, features) -> nn.Module:
        raise NotImplementedError

    def state(self) -> dict:
        """What a trained model needs besides its weights (vocabularies), for mode=evaluate."""
        return {k: getattr(self, k) for k in ("words", "labels") if hasattr(self, k)}

    def load_state(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self.word_index = {w: i for i, w in enumerate(self.words)}
        if hasattr(self, "labels"):
            self.label_index = {l: i for i, l in enumerate(self.labels)}

    def token_inputs(self, sentences: list[list[str]]) -> dict[str, torch.Tensor]:
        T = max(len(s) for s in sentences)
        ids = torch.zeros(len(sentences), T, dtype=torch.long)
        for i, s in enumerate(sentences):
            ids[i, : len(s)] = torch.tensor([self.word_index.get(t, 1) for t in s])
        return {"word_ids": ids, "char_ids": batch_to_ids(sentences),
                "mask": torch.arange(T).unsqueeze(0) < torch.tensor([len(s) for s in sentences]).unsqueeze(1)}

    def batch(self, ds: datasets.Dataset, indices: list[int]) -> dict:
        raise NotImplementedError

    # evaluation ------------------------------------------------------------------------------
    def predict(self, model: nn.Module, batch: dict, elmo: dict) -> list:
        raise NotImplementedError

    def score(self, ds: datasets.Dataset, predictions: list) -> dict:
        raise NotImplementedError

    def write_predictions(self, ds: datasets.Dataset, predictions: list, prefix: Path) -> Path:
        """Write predictions in the format of the task's official scorer; returns the file."""
        raise NotImplementedError
