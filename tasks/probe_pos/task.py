"""The POS probe as a task of the runner (Peters et al. 2018 §5.3, Table 6): how much part-of-speech
each frozen encoder layer holds, measured by a linear classifier per layer (and one on the learned
mix) trained by the one trainer. Data: ``token<TAB>tag`` lines, a blank line between sentences (the
PTB WSJ sample here; the paper used the full WSJ). Selection on dev by the mix's accuracy."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import torch

from ..base import Task
from .model import LayerProbe
from .reader import read_tagged


def read_tagged_dataset(path, cfg, split) -> tuple[datasets.Dataset, dict]:
    sentences, tags = read_tagged(path)
    return datasets.Dataset.from_dict({"tokens": sentences, "tags": tags}), {
        "sentences": len(sentences),
        "tokens": sum(map(len, sentences)),
    }


class PosProbeTask(Task):
    name, metric = "probe_pos", "accuracy"
    readers = {"tagged": read_tagged_dataset}
    STATE = ("labels",)
    VERSION = 2  # 1: trained by its own loop, outside the trainer (records kept beside the new ones)

    def build_vocab(self, train) -> None:
        """The tags seen in training (the probe reads no words: its inputs are the encoder's layers)."""
        self.labels = sorted({t for tags in train["tags"] for t in tags})
        self._index()

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        lengths = [len(s) for s in rows["tokens"]]
        mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
        tags = torch.zeros(mask.shape, dtype=torch.long)
        for i, seq in enumerate(rows["tags"]):  # a tag never seen in training: ignored by the loss, never right
            tags[i, : len(seq)] = torch.tensor([self.label_index.get(t, -100) for t in seq])
        return {"mask": mask, "tags": tags}

    def build_model(self, features):
        return LayerProbe(self.labels, features)

    def predict(self, model, batch) -> list:
        return [
            {head: [self.labels[i] for i in seq] for head, seq in heads.items()} for heads in model(batch).predictions
        ]

    def score(self, ds, predictions) -> dict:
        """Token accuracy of the mix (the dev metric) and of every layer's classifier."""
        gold = [t for tags in ds["tags"] for t in tags]
        per_head = {}
        for head in predictions[0]:
            guessed = [t for p in predictions for t in p[head]]
            per_head[head] = 100 * sum(g == p for g, p in zip(gold, guessed, strict=True)) / len(gold)
        return {
            "accuracy": per_head["mix"],
            "accuracy_per_layer": per_head,
            "tokens_with_unseen_tag": sum(t not in self.label_index for t in gold),
        }

    def unit_counts(self, ds, predictions) -> tuple[list, np.ndarray]:
        """Sentences resampled; per sentence, the mix's correct tokens and the tokens (the dev metric's sums)."""
        counts = [
            [sum(g == p for g, p in zip(gold, pred["mix"], strict=True)), len(gold)]
            for gold, pred in zip(ds["tags"], predictions, strict=True)
        ]
        return list(range(len(counts))), np.array(counts, dtype=float).reshape(-1, 2)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """``token gold predicted`` per line (the mix's prediction), a blank line between sentences."""
        path = Path(f"{prefix}.txt")
        with open(path, "w", encoding="utf-8") as f:
            for tokens, gold, pred in zip(ds["tokens"], ds["tags"], predictions, strict=True):
                f.writelines(f"{t}\t{g}\t{p}\n" for t, g, p in zip(tokens, gold, pred["mix"]))
                f.write("\n")
        return path
