"""CoNLL-2003 NER as a task of the runner (Peters et al. 2018 §4 "Named entity extraction")."""

from __future__ import annotations

from pathlib import Path

import datasets
import torch

from ..base import Task
from ..common.hub import load_hub_split
from ..common.tokenizer import tokenize
from .metric import f1_of_sums, span_counts, span_f1
from .model import NerTagger
from .reader import from_hf_conll2003, read_conll2003_file, read_tagged_columns
from .tags import bio_to_bioul, bio_to_iob1, bioul_to_bio


class NerTask(Task):
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "docstart_lines": "-DOCSTART- lines (document breaks, not sentences)",
        "language_prefix_dropped": "tokens whose language prefix (WikiANN's en:) was dropped, every token having it",
        "columns": "the widest line's columns, and which were read (the token first, the tag last)",
    }
    name, metric = "ner", "f1"
    readers = {
        "conll2003": lambda path, cfg, split: read_conll2003_file(path),
        "columns": lambda path, cfg, split: read_tagged_columns(path),
    }

    def read_hf(self, data_cfg, split):
        return from_hf_conll2003(load_hub_split(data_cfg, split)), {}

    def label_list(self, train) -> list[str]:
        """BIOUL tags of the entity types seen in training (the CRF's labels)."""
        types = sorted({t[2:] for tags in train["tags"] for t in tags if t != "O"})
        return ["O"] + [f"{p}-{t}" for t in types for p in "BILU"]

    def build_model(self, features):
        return NerTagger(self.words, self.labels, self.cfg, features)

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        out = self.token_inputs(rows["tokens"])
        tags = torch.zeros_like(out["word_ids"])
        for i, seq in enumerate(rows["tags"]):
            tags[i, : len(seq)] = torch.tensor([self.label_index.get(t, 0) for t in bio_to_bioul(seq)])
        out["tags"] = tags
        return out

    def predict(self, model, batch) -> list:
        return [bioul_to_bio([self.labels[i] for i in seq]) for seq in model(batch).predictions]

    def score(self, ds, predictions) -> dict:
        return span_f1(ds["tags"], predictions)

    def unit_counts(self, ds, predictions):
        """Sentences, with their (correct, predicted, gold) span counts."""
        return list(range(len(ds))), span_counts(ds["tags"], predictions)

    metric_of_sums = staticmethod(f1_of_sums)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """CoNLL lines ``token gold predicted`` in the input file's scheme (IOB1 when any span of
        the file starts with I-, else BIO), a blank line between sentences: what conlleval reads."""
        path = Path(f"{prefix}.conll")
        iob1 = any(g != b for g, b in zip(ds["tags_file"], ds["tags"]))
        with open(path, "w", encoding="utf-8") as f:
            for tokens, gold, pred in zip(ds["tokens"], ds["tags_file"], predictions, strict=True):
                shown = bio_to_iob1(pred) if iob1 else pred
                f.writelines(f"{t} {g} {p}\n" for t, g, p in zip(tokens, gold, shown))
                f.write("\n")
        return path

    def read_raw(self, lines, where):
        """One sentence per line, tokenized by the project tokenizer (``tasks/common/tokenizer.py``)."""
        tokens = [tokenize(text) for text in lines["text"]]
        return datasets.Dataset.from_dict(
            {
                **lines,
                "tokens": tokens,
                "tags": [["O"] * len(t) for t in tokens],
                "tags_file": [["O"] * len(t) for t in tokens],
            }
        )

    def raw_output(self, row, prediction):
        """The tokens, their BIO tags and the entities as token spans (``end`` exclusive)."""
        entities, start = [], None
        for i, tag in enumerate([*prediction, "O"]):
            if start is not None and not tag.startswith("I-"):
                entities.append(
                    {"type": prediction[start][2:], "start": start, "end": i, "text": " ".join(row["tokens"][start:i])}
                )
                start = None
            if tag.startswith("B-") or (tag.startswith("I-") and start is None):
                start = i
        return {
            "line": row["line"],
            "text": row["text"],
            "tokens": row["tokens"],
            "tags": prediction,
            "entities": entities,
        }
