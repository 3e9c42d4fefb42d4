"""SQuAD v1.1 reader (Rajpurkar et al. 2016): JSON ``data -> paragraphs -> qas``. Contexts and
questions are tokenized with the project tokenizer; answers' character offsets are mapped to token
spans, and every gold answer text is kept for evaluation. An answer whose text is not at its
``answer_start`` is realigned to the occurrence of its text nearest to that offset (counted as
``answers_realigned`` and warned); one whose text is nowhere in the context, or whose offset lies
outside it, is an error naming the file and question id. An answer that does not line up with
token boundaries is mapped to the tokens it overlaps (counted as ``answers_misaligned``).
Default source: the Hugging Face ``squad`` dataset; ``data.dir`` reads local JSON files."""

from __future__ import annotations

import json
from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import read_text
from ..common.tokenizer import tokenize, tokenize_with_offsets


def char_span_to_tokens(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """First and last token overlapping the characters [start, end)."""
    first = next((i for i, (s, e) in enumerate(offsets) if e > start), None)
    last = next((i for i in range(len(offsets) - 1, -1, -1) if offsets[i][0] < end), None)
    if first is None or last is None or last < first:
        raise ValueError(f"characters {start}-{end} cover no token")
    return first, last


def answer_start(context: str, text: str, start: int, where: str, qid: str) -> tuple[int, bool]:
    """Where the answer ``text`` is: at ``start`` if it is there, else its occurrence nearest to
    ``start`` (realigned: True); not in the context at all is an error."""
    if not isinstance(text, str) or not text:
        raise DataFormatError(f"{where}: question {qid}: answer text must be a non-empty string, got {text!r}")
    if isinstance(start, bool) or not isinstance(start, int):
        raise DataFormatError(f"{where}: question {qid}: answer_start must be an integer, got {start!r}")
    if not 0 <= start <= len(context):
        raise DataFormatError(f"{where}: question {qid}: answer offset {start} outside the context")
    if context[start : start + len(text)] == text:
        return start, False
    found, at = [], context.find(text)
    while at != -1:
        found.append(at)
        at = context.find(text, at + 1)
    if not found:
        raise DataFormatError(
            f"{where}: question {qid}: answer {text!r} is not in the context "
            f"(at answer_start {start}: {context[start : start + len(text)]!r})"
        )
    return min(found, key=lambda i: (abs(i - start), i)), True


def _examples(records, where: str) -> tuple[list[dict], dict]:
    rows, stats = [], {"paragraphs": 0, "questions": 0, "answers_misaligned": 0, "answers_realigned": 0}
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
                if not isinstance(a, dict) or "text" not in a or "answer_start" not in a:
                    raise DataFormatError(
                        f"{where}: question {qa['id']}: an answer needs 'text' and 'answer_start', got {a!r}"
                    )
                start, realigned = answer_start(context, a["text"], a["answer_start"], where, qa["id"])
                stats["answers_realigned"] += realigned
                end = start + len(a["text"])
                first, last = char_span_to_tokens(offsets, start, end)
                if context[offsets[first][0] : offsets[last][1]] != a["text"]:
                    stats["answers_misaligned"] += 1
                spans.append([first, last])
            rows.append(
                {
                    "id": qa["id"],
                    "context_id": ctx_id,
                    "context": context,
                    "question": qa["question"],
                    "context_tokens": [t for t, _, _ in toks],
                    "offsets": [list(o) for o in offsets],
                    "question_tokens": tokenize(qa["question"]),
                    "answers": [a["text"] for a in qa["answers"]],
                    "spans": spans,
                }
            )
            stats["questions"] += 1
    return rows, stats


def read_squad_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise DataFormatError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    records, n, where = [], 0, "the top level"
    try:
        for a, article in enumerate(data["data"]):
            where = f"article {a}"
            for p, para in enumerate(article["paragraphs"]):
                where = f"article {a}, paragraph {p}"
                records.append(
                    {
                        "context": para["context"],
                        "context_id": n,
                        "first_of_context": 1,
                        "qas": [
                            {"id": q["id"], "question": q["question"], "answers": q["answers"]} for q in para["qas"]
                        ],
                    }
                )
                n += 1
    except (KeyError, TypeError) as e:
        raise DataFormatError(f"{path}: not SQuAD v1.1 JSON (missing {e} in {where})") from None
    rows, stats = _examples(records, str(path))
    if not rows:
        raise DataFormatError(f"{path}: no questions")
    return datasets.Dataset.from_list(rows), stats


def from_hf_squad(ds: datasets.Dataset, where: str) -> tuple[datasets.Dataset, dict]:
    """The hub copy (one row per question: ``context``, ``question``, ``answers`` with ``text`` and
    ``answer_start`` lists) as the reader's rows."""
    records, ids = [], {}
    for ex in ds:
        ctx = ids.setdefault(ex["context"], len(ids))
        answers = [{"text": t, "answer_start": s} for t, s in zip(ex["answers"]["text"], ex["answers"]["answer_start"])]
        records.append(
            {
                "context": ex["context"],
                "context_id": ctx,
                "first_of_context": int(ctx == len(ids) - 1),
                "qas": [{"id": ex["id"], "question": ex["question"], "answers": answers}],
            }
        )
    rows, stats = _examples(records, where)
    return datasets.Dataset.from_list(rows), stats
