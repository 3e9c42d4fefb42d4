"""SRL as a task of the runner (Peters et al. 2018 §4): one example per (sentence, predicate); the
biLM reads each sentence once and every predicate of the sentence shares its activations."""

from __future__ import annotations

from pathlib import Path

import torch

from ..base import Task, set_column
from ..hub import load_hub_split
from .metric import srl_scores, write_props
from .model import SrlTagger
from .reader import from_hf_conll2012, read_conll2012_file, read_conllu_propbank_file

READERS = {
    "conllu": lambda path, cfg, split: read_conllu_propbank_file(path),
    "conll2012": lambda path, cfg, split: read_conll2012_file(path),
}


def with_bilm_rows(ds):
    """Dense row numbers of the distinct sentences, in order of appearance."""
    rows, seen = [], {}
    for s in ds["sentence"]:
        rows.append(seen.setdefault(s, len(seen)))
    return set_column(ds, "bilm_row", rows)


class SrlTask(Task):
    name, metric = "srl", "f1"
    readers = READERS  # conllu (first: the default) | conll2012
    NOTICES = (
        "predicates_without_V",
        "unannotated_sentences_skipped",
        "multiword_ranges_skipped",
        "empty_nodes_skipped",
    )

    def read_hf(self, data_cfg, split):
        return from_hf_conll2012(load_hub_split(data_cfg, split)), {}

    def prepare(self, ds, split):
        return with_bilm_rows(ds)

    def sentences(self, ds) -> list[list[str]]:
        out = {}
        for row, tokens in zip(ds["bilm_row"], ds["tokens"]):
            out.setdefault(row, tokens)
        return [out[i] for i in range(len(out))]

    def bilm_rows(self, ds, indices: list[int]) -> list[int]:
        return [ds[i]["bilm_row"] for i in indices]

    def label_list(self, train) -> list[str]:
        roles = sorted({t[2:] for tags in train["tags"] for t in tags if t != "O"})
        return ["O"] + [f"{p}-{r}" for r in roles for p in "BI"]

    def build_model(self, features):
        return SrlTagger(self.words, self.labels, self.cfg, features)

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        out = self.token_inputs(rows["tokens"])
        out["is_predicate"] = torch.zeros_like(out["word_ids"])
        out["tags"] = torch.zeros_like(out["word_ids"])
        for i, (p, tags) in enumerate(zip(rows["predicate"], rows["tags"])):
            out["is_predicate"][i, p] = 1
            out["tags"][i, : len(tags)] = torch.tensor([self.label_index.get(t, 0) for t in tags])
        return out

    def predict(self, model, batch) -> list:
        return [[self.labels[k] for k in tags] for tags in model(batch).predictions]

    def score(self, ds, predictions) -> dict:
        return srl_scores(ds["tags"], predictions)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """CoNLL-2005 ``props`` files, ``<prefix>.gold.props`` and ``<prefix>.props`` (predicted),
        one block per sentence with every predicate's column."""
        grouped: dict[int, tuple[list[str], list[int], list, list]] = {}
        for ex, pred in zip(ds, predictions, strict=True):
            entry = grouped.setdefault(ex["bilm_row"], (ex["tokens"], [], [], []))
            entry[1].append(ex["predicate"])
            entry[2].append(ex["tags"])
            entry[3].append(pred)
        blocks = [grouped[k] for k in sorted(grouped)]
        write_props(f"{prefix}.gold.props", [(t, p, g) for t, p, g, _ in blocks])
        write_props(f"{prefix}.props", [(t, p, q) for t, p, _, q in blocks])
        return Path(f"{prefix}.props")
