"""SRL as a task of the runner (Peters et al. 2018 §4): one example per (sentence, predicate); the
biLM reads each sentence once and every predicate of the sentence shares its activations."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import torch

from suite_common.errors import DataError

from ..base import Task, set_column
from ..common.hub import load_hub_split
from ..common.tokenizer import tokenize
from ..ner.metric import f1_of_sums
from .metric import argument_counts, srl_scores, write_props
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
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "predicates": "predicates (one SRL example each)",
        "sentences_without_predicate": "sentences with no predicate (no SRL example)",
        "predicates_without_V": "predicate columns without a V tag, left out",
        "unannotated_sentences_skipped": "sentences without PropBank columns, left out",
        "multiword_ranges_skipped": "CoNLL-U multiword token lines (their parts are read instead)",
        "empty_nodes_skipped": "CoNLL-U empty nodes (enhanced graphs), not tokens",
    }
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
        return srl_scores(ds["tags"][:], predictions)  # a column read at once, not row by row

    def unit_counts(self, ds, predictions):
        """Sentences (all their predicates together), with (correct, predicted, gold) arguments."""
        sentences: dict[int, list[int]] = {}
        for row, gold, pred in zip(ds["bilm_row"][:], ds["tags"][:], predictions, strict=True):
            counts = sentences.setdefault(row, [0, 0, 0])
            for k, c in enumerate(argument_counts(gold, pred)):
                counts[k] += c
        units = sorted(sentences)
        return units, np.array([sentences[u] for u in units], dtype=float).reshape(-1, 3)

    metric_of_sums = staticmethod(f1_of_sums)

    def read_raw(self, lines, where):
        """One sentence per line with its predicate in square brackets (``The cat [sat] on the mat .``),
        tokenized by the project tokenizer; a line with several bracketed words is one example per
        predicate."""
        rows = {"line": [], "text": [], "tokens": [], "predicate": [], "tags": [], "sentence": []}
        for k, (line, text) in enumerate(zip(lines["line"], lines["text"])):
            tokens, marked = [], []
            for token in text.split():
                if (
                    len(token) > 2
                    and token.startswith("[")
                    and token.endswith("]")
                    and "[" not in token[1:-1]
                    and ("]" not in token[1:-1])
                ):
                    marked.append(len(tokens))
                    token = token[1:-1]
                elif "[" in token or "]" in token:
                    raise DataError(
                        f"{where}:{line}: {token!r}: a predicate is one word in square brackets, as in "
                        "'The cat [sat] .' (no nested, unclosed or multi-word brackets)"
                    )
                tokens.extend(tokenize(token))
            if not marked:
                raise DataError(
                    f"{where}:{line}: no predicate marked: put it in square brackets, as in 'The cat [sat] .'"
                )
            for predicate in marked:
                for key, value in (("line", line), ("text", text), ("tokens", tokens), ("predicate", predicate),
                                   ("tags", ["O"] * len(tokens)), ("sentence", k)):  # fmt: skip
                    rows[key].append(value)
        return datasets.Dataset.from_dict(rows)

    def raw_output(self, row, prediction):
        """The tokens, the predicate, the BIO tags and the arguments as token spans (``end`` exclusive)."""
        arguments, start = [], None
        for i, tag in enumerate([*prediction, "O"]):
            if start is not None and not tag.startswith("I-"):
                role = prediction[start][2:]
                arguments.append({"role": role, "start": start, "end": i, "text": " ".join(row["tokens"][start:i])})
                start = None
            if tag.startswith("B-") or (tag.startswith("I-") and start is None):
                start = i
        return {
            "line": row["line"],
            "tokens": row["tokens"],
            "predicate": {"index": row["predicate"], "text": row["tokens"][row["predicate"]]},
            "tags": prediction,
            "arguments": arguments,
        }

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
