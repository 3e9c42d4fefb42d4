"""SQuAD v1.1 reader (Rajpurkar et al. 2016): JSON ``data -> paragraphs -> qas``. Contexts and
questions are tokenized with the project tokenizer; answers' character offsets are mapped to token
spans, and every gold answer text is kept for evaluation. A training answer that does not line up
with token boundaries is still mapped to the tokens it overlaps; one outside the context is an error.
Default source: the Hugging Face ``squad`` dataset; ``data.dir`` reads local JSON files."""
from __future__ import annotations

import json
from pathlib import Path

import datasets

from elmo_core.errors import DataError as DataFormatError

from ..tokenizer import tokenize, tokenize_with_offsets


def char_span_to_tokens(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """First and last token overlapping the characters [start, end)."""
    first = next((i for i, (s, e) in enumerate(offsets) if e > start), None)
    last = next((i for i in range(len(offsets) - 1, -1, -1) if offsets[i][0] < end), None)
    if first is None or last is None or last < first:
        raise ValueError(f"characters {start}-{end} cover no token")
    return first, last


def _examples(records, where: str) -> tuple[list[dict], dict]:
    rows, stats = [], {"paragraphs": 0, "questions": 0, "answers_misaligned": 0}
    for rec in records:
        context, ctx_id = rec["context"], rec["context_id"]
        toks = tokenize_with_offsets(context)
        offsets = [(s, e) for _, s, e in toks]
        stats["paragraphs"] += rec["first_of_context"]
        for qa in rec["qas"]:
            if not qa["answers"]:
                raise DataFormatError(f"{where}: question {qa['id']} has no answer (SQuAD v2 is not supported)")
            spans = []
            for a in qa["answers"]:
                start, end = a["answer_start"], a["answer_start"] + len(a["text"])
                if end > len(context) or start < 0:
                    raise DataFormatError(f"{where}: question {qa['id']}: answer offset {start} outside the context")
                first, last = char_span_to_tokens(offsets, start, end)
                if context[offsets[first][0]: offsets[last][1]] != a["text"]:
                    stats["answers_misaligned"] += 1
                spans.append([first, last])
            rows.append({"id": qa["id"], "context_id": ctx_id, "context": context, "question": qa["question"],
                         "context_tokens": [t for t, _, _ in toks], "offsets": [list(o) for o in offsets],
                         "question_tokens": tokenize(qa["question"]), "answers": [a["text"] for a in qa["answers"]],
                         "spans": spans})
            stats["questions"] += 1
    return rows, stats


def read_squad_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataFormatError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    records, n = [], 0
    try:
        for a, article in enumerate(data["data"]):
            for p, para in enumerate(article["paragraphs"]):
                records.append({"context": para["context"], "context_id": n, "first_of_context": 1,
                                "qas": [{"id": q["id"], "question": q["question"], "answers": q["answers"]}
                                        for q in para["qas"]]})
                n += 1
    except (KeyError, TypeError) as e:
        raise DataFormatError(f"{path}: not SQuAD v1.1 JSON (missing {e} in article {a}, paragraph {p})") from None
    rows, stats = _examples(records, str(path))
    if not rows:
        raise DataFormatError(f"{path}: no questions")
    return datasets.Dataset.from_list(rows), stats


def load_hf_squad(name: str, split: str) -> datasets.Dataset:
    ds = datasets.load_dataset(name, split=split)
    records, ids = [], {}
    for ex in ds:
        ctx = ids.setdefault(ex["context"], len(ids))
        answers = [{"text": t, "answer_start": s} for t, s in zip(ex["answers"]["text"], ex["answers"]["answer_start"])]
        records.append({"context": ex["context"], "context_id": ctx, "first_of_context": int(ctx == len(ids) - 1),
                        "qas": [{"id": ex["id"], "question": ex["question"], "answers": answers}]})
    rows, _ = _examples(records, f"{name}[{split}]")
    return datasets.Dataset.from_list(rows)
