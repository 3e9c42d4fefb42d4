"""SST-5 (or binary) sentence classification as a task of the runner (§4 "Sentiment analysis")."""

from __future__ import annotations

from pathlib import Path

import datasets
import torch

from ..base import Task
from ..common.class_scores import class_scores
from ..common.hub import load_hub_split
from ..common.tokenizer import tokenize
from .model import SentimentClassifier
from .reader import from_hf_sst, read_sst_file


def read_ptb_trees(path, cfg, split: str):
    """PTB-style SST trees; phrases (``phrases_min_tokens``) are training examples only."""
    phrases = cfg.phrases_min_tokens if split == "train" else None
    return read_sst_file(path, bool(cfg.binary), phrases)


class SstTask(Task):
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "trees": "SST trees (one sentence each)",
        "phrases": "labelled phrases below the sentence roots (used when task.phrases=true)",
        "neutral_dropped": "neutral sentences left out (binary SST only)",
    }
    name, metric = "sst", "accuracy"
    readers = {"ptb": read_ptb_trees}
    NOTICES = ("neutral_dropped",)

    def read_hf(self, data_cfg, split):
        return from_hf_sst(load_hub_split(data_cfg, split), f"{data_cfg.hf_name}[{split}]", bool(self.cfg.binary))

    def build_model(self, features):
        return SentimentClassifier(self.words, 2 if self.cfg.binary else 5, self.cfg, features)

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        out = self.token_inputs(rows["tokens"])
        out["label"] = torch.tensor(rows["label"])
        return out

    def predict(self, model, batch) -> list:
        return model(batch).predictions

    def score(self, ds, predictions) -> dict:
        return class_scores(list(ds["label"]), predictions, self.BINARY if self.cfg.binary else self.FINE)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """One line per sentence: ``gold<TAB>predicted``."""
        path = Path(f"{prefix}.tsv")
        path.write_text("".join(f"{g}\t{p}\n" for g, p in zip(ds["label"], predictions, strict=True)))
        return path

    FINE = ("very negative", "negative", "neutral", "positive", "very positive")
    BINARY = ("negative", "positive")

    def read_raw(self, lines, where):
        """One sentence per line, tokenized by the project tokenizer (``tasks/common/tokenizer.py``)."""
        tokens = [tokenize(text) for text in lines["text"]]
        return datasets.Dataset.from_dict({**lines, "tokens": tokens, "label": [0] * len(tokens)})

    def raw_output(self, row, prediction):
        name = (self.BINARY if self.cfg.binary else self.FINE)[prediction]
        return {
            "line": row["line"],
            "text": row["text"],
            "tokens": row["tokens"],
            "label": int(prediction),
            "label_name": name,
        }
