"""Entailment as a task of the runner (Peters et al. 2018 §4 "Textual entailment"). The biLM reads
every distinct sentence once; premise and hypothesis rows point into that list."""

from __future__ import annotations

from pathlib import Path

import datasets
import torch

from suite_common.errors import DataError

from ..base import Task, set_column
from ..common.class_scores import class_scores
from ..common.hub import load_hub_split
from ..common.tokenizer import tokenize
from .model import Esim
from .reader import LABELS, from_hf_snli, read_sick_tsv, read_snli_jsonl

READERS = {"snli": lambda path, cfg, split: read_snli_jsonl(path), "sick": lambda path, cfg, split: read_sick_tsv(path)}


class NliTask(Task):
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "pairs": "sentence pairs read",
        "no_gold_label_dropped": "pairs without a gold label, left out (as the SNLI authors do)",
    }
    name, metric = "nli", "accuracy"
    readers = READERS  # snli (first: the default) | sick
    NOTICES = ("no_gold_label_dropped",)
    vocab_columns = ("premise", "hypothesis")

    def read_hf(self, data_cfg, split):
        return from_hf_snli(load_hub_split(data_cfg, split), data_cfg.hf_name, split)

    def prepare(self, ds, split):
        """Rows of the distinct sentences the biLM reads, for premise and hypothesis."""
        index, p_rows, h_rows = {}, [], []
        for p, h in zip(ds["premise"], ds["hypothesis"]):
            p_rows.append(index.setdefault(" ".join(p), len(index)))
            h_rows.append(index.setdefault(" ".join(h), len(index)))
        return set_column(set_column(ds, "premise_row", p_rows), "hypothesis_row", h_rows)

    def sentences(self, ds) -> list[list[str]]:
        out = {}
        for pr, hr, p, h in zip(ds["premise_row"], ds["hypothesis_row"], ds["premise"], ds["hypothesis"]):
            out.setdefault(pr, p)
            out.setdefault(hr, h)
        return [out[i] for i in range(len(out))]

    def bilm_sides(self, ds, indices) -> dict:
        rows = ds.select(indices)
        return {side: list(rows[f"{side}_row"]) for side in ("premise", "hypothesis")}

    def build_model(self, features):
        return Esim(self.words, len(LABELS), self.cfg, features)

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        return {
            "premise": self.token_inputs(rows["premise"]),
            "hypothesis": self.token_inputs(rows["hypothesis"]),
            "label": torch.tensor(list(rows["label"])),
        }

    def predict(self, model, batch) -> list:
        return model(batch).predictions

    def score(self, ds, predictions) -> dict:
        return class_scores(list(ds["label"]), predictions, LABELS)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """``pair_id<TAB>gold<TAB>predicted`` with label names."""
        path = Path(f"{prefix}.tsv")
        path.write_text(
            "".join(
                f"{i}\t{LABELS[g]}\t{LABELS[p]}\n"
                for i, g, p in zip(ds["pair_id"], ds["label"], predictions, strict=True)
            )
        )
        return path

    def read_raw(self, lines, where):
        """One pair per line, ``premise<TAB>hypothesis``, each tokenized by the project tokenizer."""
        pairs = []
        for line, text in zip(lines["line"], lines["text"]):
            cells = text.split("\t")
            if len(cells) != 2:
                raise DataError(f"{where}:{line}: expected premise<TAB>hypothesis, got {len(cells)} field(s)")
            for name, cell in zip(("premise", "hypothesis"), cells):
                if not tokenize(cell):
                    raise DataError(f"{where}:{line}: empty {name} (premise<TAB>hypothesis, each with a word)")
            pairs.append(cells)
        return datasets.Dataset.from_dict(
            {
                **lines,
                "pair_id": [str(n) for n in lines["line"]],
                "premise": [tokenize(p) for p, _ in pairs],
                "hypothesis": [tokenize(h) for _, h in pairs],
                "label": [0] * len(pairs),
            }
        )

    def raw_output(self, row, prediction):
        return {
            "line": row["line"],
            "premise": row["premise"],
            "hypothesis": row["hypothesis"],
            "label": LABELS[prediction],
        }
