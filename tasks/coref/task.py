"""Coreference resolution as a task of the runner (Peters et al. 2018 §4, Table 1's average F1;
appendix A.6). An example is a document (a window of at most ``max_training_sentences``
sentences in training, as the original trains on truncated documents); the biLM reads each
sentence once, stateless, through the activation cache, and the model sees the whole document."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import torch

from suite_common.errors import DataError

from ..base import Task, set_column
from ..common.hub import load_hub_split
from .metric import conll_f1_of_sums, coref_scores, document_counts
from .model import CorefModel
from .reader import read_conll2012_coref, write_conll2012_coref


def from_hf_conll2012_coref(ds: datasets.Dataset) -> tuple[datasets.Dataset, dict]:
    """The OntoNotes hub copy the SRL task reads: sentences with ``coref_spans`` [cluster, start, end]."""
    rows = []
    for doc in ds:
        sentences, clusters, offset = [], {}, 0
        for sentence in doc["sentences"]:
            sentences.append(list(sentence["words"]))
            for cluster, start, end in sentence["coref_spans"]:
                clusters.setdefault(cluster, []).append([offset + start, offset + end])
            offset += len(sentence["words"])
        part = doc["sentences"][0]["part_id"] if doc["sentences"] else 0
        columns = [[doc["document_id"], str(part), str(i), w] for s in sentences for i, w in enumerate(s)]
        rows.append(
            {
                "doc_key": f"{doc['document_id']}_{part}",
                "sentences": sentences,
                "clusters": [sorted(c) for _, c in sorted(clusters.items())],
                "columns": columns,
            }
        )
    return datasets.Dataset.from_list(rows), {"documents": len(rows)}


def windows(ds: datasets.Dataset, max_sentences: int) -> datasets.Dataset:
    """Documents cut into consecutive windows of at most ``max_sentences`` sentences, with the
    clusters' mentions inside each window (offsets shifted to it)."""
    rows = []
    for doc in ds:
        sentences = doc["sentences"]
        for first in range(0, len(sentences), max_sentences):
            part = sentences[first : first + max_sentences]
            start = sum(len(s) for s in sentences[:first])
            end = start + sum(len(s) for s in part)
            clusters = [[[s - start, e - start] for s, e in c if start <= s and e < end] for c in doc["clusters"]]
            rows.append(
                {
                    "doc_key": f"{doc['doc_key']}#{first}",
                    "sentences": part,
                    "clusters": [c for c in clusters if c],
                    "columns": doc["columns"][start:end],
                }
            )
    return datasets.Dataset.from_list(rows)


class CorefTask(Task):
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "documents": "documents read",
        "mentions": "gold mentions",
        "clusters": "gold coreference clusters",
    }
    name, metric = "coref", "conll_f1"
    FOLD_UNIT = "doc_id"  # a cross-validation fold holds whole documents
    readers = {"conll2012": lambda path, cfg, split: read_conll2012_coref(path)}

    def read_hf(self, data_cfg, split):
        return from_hf_conll2012_coref(load_hub_split(data_cfg, split))

    def prepare(self, ds, split):
        """Training documents in windows; ``first_row``: each document's first sentence among the biLM's."""
        if split == "train" and self.cfg.max_training_sentences:
            ds = windows(ds, int(self.cfg.max_training_sentences))
        rows, first = [], 0
        for sentences in ds["sentences"]:
            if any(len(s) == 0 for s in sentences):
                raise DataError(f"{split}: a document has an empty sentence")
            rows.append(first)
            first += len(sentences)
        return set_column(ds, "first_row", rows)

    def sentences(self, ds) -> list[list[str]]:
        return [s for doc in ds["sentences"] for s in doc]

    def bilm_rows(self, ds, indices: list[int]) -> list[int]:
        if len(indices) != 1:
            raise ValueError("a coreference batch is one document")
        doc = ds[indices[0]]
        return list(range(doc["first_row"], doc["first_row"] + len(doc["sentences"])))

    def batches(self, ds, batch_size: int, shuffle: bool, rng=None) -> list[list[int]]:
        order = list(range(len(ds)))
        if shuffle:
            rng.shuffle(order)
        return [[i] for i in order]  # one document per step, as the original

    def batch(self, ds, indices) -> dict:
        doc = ds[indices[0]]
        out = self.token_inputs(doc["sentences"])
        mentions = [(s, e, c) for c, cluster in enumerate(doc["clusters"]) for s, e in cluster]
        out["gold_starts"] = torch.tensor([m[0] for m in mentions], dtype=torch.long)
        out["gold_ends"] = torch.tensor([m[1] for m in mentions], dtype=torch.long)
        out["gold_clusters"] = torch.tensor([m[2] for m in mentions], dtype=torch.long)
        return out

    def build_model(self, features):
        return CorefModel(self.words, self.cfg, features)

    def predict(self, model, batch) -> list:
        return model(batch).predictions

    def score(self, ds, predictions) -> dict:
        scores = coref_scores(ds["clusters"], predictions)
        flat = {"conll_f1": scores["conll_f1"]}
        for metric in ("muc", "b_cubed", "ceafe"):
            flat.update({f"{metric}_{k}": v for k, v in scores[metric].items()})
        return flat

    def unit_counts(self, ds, predictions):
        """Documents, with their MUC, B³ and CEAFφ4 counts (``metric.document_counts``)."""
        rows = [document_counts(k, r) for k, r in zip(ds["clusters"], predictions, strict=True)]
        return list(ds["doc_key"]), np.array(rows, dtype=float).reshape(-1, 12)

    metric_of_sums = staticmethod(conll_f1_of_sums)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """CoNLL-2012 layout with the predicted clusters in the last column (``scorer.pl`` reads it)."""
        return write_conll2012_coref(Path(f"{prefix}.conll"), ds, predictions)
