"""SQuAD v1.1 as a task of the runner (Peters et al. 2018 §4 "Question answering"). The biLM reads
each distinct context once and each question once; question and context share the ELMo mixes."""

from __future__ import annotations

import random
from pathlib import Path

import datasets
import numpy as np
import torch

from suite_common.errors import ConfigError, DataError

from ..base import Task, set_column
from ..common.hub import load_hub_split
from ..common.tokenizer import tokenize, tokenize_with_offsets
from .metric import question_f1, squad_scores
from .model import BidafQA
from .reader import from_hf_squad, read_squad_file


class QaTask(Task):
    COUNTS = {  # what its readers' counts mean (a dry run prints them)
        "paragraphs": "SQuAD contexts",
        "questions": "SQuAD questions",
        "answers_misaligned": "answers that start or end inside a token: their span is the tokens they overlap "
        "(SQuAD's own tokenization differs from ours; the official scorer compares text, so these still score)",
        "answers_realigned": "answers not at their answer_start, moved to the nearest occurrence of their text",
    }
    name, metric = "qa", "f1"
    readers = {"squad": lambda path, cfg, split: read_squad_file(path)}
    NOTICES = ("answers_realigned", "answers_misaligned")
    vocab_columns = ("context_tokens", "question_tokens")

    def read_hf(self, data_cfg, split):
        return from_hf_squad(load_hub_split(data_cfg, split), f"{data_cfg.hf_name}[{split}]")

    def prepare(self, ds, split):
        """``context_row``: each distinct context's row among the biLM's sentences."""
        rows, seen = [], {}
        for cid in ds["context_id"]:
            rows.append(seen.setdefault(cid, len(seen)))
        if rows != sorted(rows):
            raise DataError(f"{split}: the questions of one context must be contiguous")
        return set_column(ds, "context_row", rows)

    def sentences(self, ds) -> list[list[str]]:
        """Distinct contexts (rows 0..C-1, in order of ``context_row``), then every question."""
        contexts = {}
        for row, toks in zip(ds["context_row"], ds["context_tokens"]):
            contexts.setdefault(row, toks)
        return [contexts[r] for r in range(len(contexts))] + list(ds["question_tokens"])

    def bilm_sides(self, ds, indices) -> dict:
        rows = ds.select_columns("context_row")
        n_contexts = rows[-1]["context_row"] + 1  # rows are dense and non-decreasing
        return {"context": rows.select(indices)["context_row"], "question": [n_contexts + i for i in indices]}

    def build_model(self, features):
        return BidafQA(self.words, self.cfg, features)

    def batches(self, ds, batch_size: int, shuffle: bool, rng: random.Random | None = None) -> list[list[int]]:
        """Training batches as ``task.batching`` says; evaluation batches always in order, token-capped.

        ``token_capped``: at most ``batch_size`` questions and ``max_tokens_per_batch`` padded context
        tokens, in shuffled order. ``clustered``: exactly ``batch_size`` questions (the last batch fewer)
        of similar context length, as the paper's SQuAD code batches (document-qa: shuffle, sort by
        context length in buckets of 3 tokens, cut into batches of 45, shuffle the batches)."""
        lengths = [len(t) for t in ds["context_tokens"]]
        batching = self.cfg.batching
        if batching not in ("token_capped", "clustered"):
            raise ConfigError(f"task.batching: {batching!r} is not one of token_capped, clustered")
        if shuffle and batching == "clustered":
            return clustered_batches(lengths, batch_size, rng)
        order = list(range(len(ds)))
        if shuffle:
            rng.shuffle(order)
        out, current, longest = [], [], 0
        for i in order:
            longest_if = max(longest, lengths[i])
            if current and (
                len(current) >= batch_size or longest_if * (len(current) + 1) > self.cfg.max_tokens_per_batch
            ):
                out.append(current)
                current, longest_if = [], lengths[i]
            current.append(i)
            longest = longest_if
        return out + ([current] if current else [])

    def batch(self, ds, indices) -> dict:
        rows = ds.select(indices)
        spans = [s[0] for s in rows["spans"]]
        return {
            "context": self.token_inputs(rows["context_tokens"]),
            "question": self.token_inputs(rows["question_tokens"]),
            "start": torch.tensor([s[0] for s in spans]),
            "end": torch.tensor([s[1] for s in spans]),
        }

    def predict(self, model, batch) -> list:
        return model(batch).predictions

    def read_raw(self, lines, where):
        """One question per line as a JSON object, ``{"context": "...", "question": "..."}``; contexts and
        questions tokenized as the SQuAD reader does."""
        import json

        rows = []
        for n, (line, text) in enumerate(zip(lines["line"], lines["text"])):
            try:
                item = json.loads(text)
                context, question = item["context"], item["question"]
            except (ValueError, KeyError, TypeError):
                raise DataError(
                    f'{where}:{line}: expected a JSON object {{"context": ..., "question": ...}} per line'
                ) from None
            if not isinstance(context, str) or not isinstance(question, str) or not context.strip():
                raise DataError(f"{where}:{line}: context and question must be non-empty strings")
            toks = tokenize_with_offsets(context)
            rows.append({"line": line, "id": str(line), "context_id": n, "context": context, "question": question,
                         "context_tokens": [t for t, _, _ in toks], "offsets": [[s, e] for _, s, e in toks],
                         "question_tokens": tokenize(question), "answers": [""], "spans": [[0, 0]]})  # fmt: skip
        return datasets.Dataset.from_list(rows)

    def raw_output(self, row, prediction):
        """The question and its predicted answer: the span's text and character offsets in the context."""
        first, last = prediction
        start, end = row["offsets"][first][0], row["offsets"][last][1]
        return {"line": row["line"], "question": row["question"], "answer": row["context"][start:end],
                "start_char": start, "end_char": end}  # fmt: skip

    def answer_texts(self, ds, predictions) -> dict[str, str]:
        ids, contexts, offsets = _answer_columns(ds)
        return {q: c[o[i][0] : o[j][1]] for q, c, o, (i, j) in zip(ids, contexts, offsets, predictions)}

    def score(self, ds, predictions) -> dict:
        return squad_scores(self.answer_texts(ds, predictions), dict(zip(ds["id"], ds["answers"])))

    def unit_counts(self, ds, predictions):
        """Questions, with (F1, 1): the metric is their mean F1."""
        texts = self.answer_texts(ds, predictions)
        rows = [(question_f1(texts.get(q, ""), answers), 1.0) for q, answers in zip(ds["id"], ds["answers"])]
        return list(ds["id"]), np.array(rows, dtype=float).reshape(-1, 2)

    def write_predictions(self, ds, predictions, prefix: Path) -> Path:
        """``{question id: answer text}``, the official SQuAD v1.1 prediction format."""
        import json

        path = Path(f"{prefix}.json")
        path.write_text(json.dumps(self.answer_texts(ds, predictions), ensure_ascii=False, indent=1))
        return path


def clustered_batches(lengths: list[int], batch_size: int, rng: random.Random, bucket: int = 3) -> list[list[int]]:
    """Batches of ``batch_size`` indices whose lengths fall in nearby buckets of ``bucket`` tokens:
    a random order sorted (stably) by bucket, cut into batches, the batches shuffled."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    order.sort(key=lambda i: lengths[i] // bucket)
    out = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    rng.shuffle(out)
    return out


_ANSWER_COLUMNS: dict[str, tuple] = {}  # the last data set's columns, by its fingerprint


def _answer_columns(ds) -> tuple[list, list, list]:
    """Question ids, contexts and token offsets, read once per data set: a report scores one dev set for
    many records, and training scores it every epoch (a data set's fingerprint names its content)."""
    key = getattr(ds, "_fingerprint", None)
    if key is not None and key in _ANSWER_COLUMNS:
        return _ANSWER_COLUMNS[key]
    columns = ds.select_columns(["id", "context", "offsets"])[:]  # whole columns, not row by row
    found = (columns["id"], columns["context"], columns["offsets"])
    if key is not None:
        _ANSWER_COLUMNS.clear()
        _ANSWER_COLUMNS[key] = found
    return found
