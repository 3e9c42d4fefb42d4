"""CoNLL-2003 readers (Tjong Kim Sang & De Meulder 2003), into ``datasets.Dataset``.

Local files (``data.dir``): the original 4-column format ``token POS chunk NER`` in IOB1,
``-DOCSTART-`` lines, a blank line between sentences. Default: the Hugging Face ``conll2003``
dataset. Every example keeps the tags as in the file (``tags_file``) for prediction files, and
``tags`` in BIO/IOB2 for training and scoring.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import text_lines
from .tags import iob1_to_bio


def read_conll2003_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    path = Path(path)
    tokens, tags, raw, sent_tokens, sent_tags = [], [], [], [], []
    stats = {"docstart_lines": 0, "sentences": 0, "tokens": 0}

    def flush():
        if sent_tokens:
            tokens.append(list(sent_tokens))
            raw.append(list(sent_tags))
            tags.append(iob1_to_bio(sent_tags))
            sent_tokens.clear()
            sent_tags.clear()

    for lineno, line in text_lines(path):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            continue
        if line.startswith("-DOCSTART-"):
            stats["docstart_lines"] += 1
            flush()
            continue
        cols = line.split()
        if len(cols) != 4:
            raise DataFormatError(f"{path}:{lineno}: expected 4 columns (token POS chunk NER), got {len(cols)}")
        tag = cols[3]
        if tag != "O" and not (len(tag) > 2 and tag[:2] in ("B-", "I-")):
            raise DataFormatError(f"{path}:{lineno}: bad NER tag {tag!r}")
        sent_tokens.append(cols[0])
        sent_tags.append(tag)
    flush()
    if not tokens:
        raise DataFormatError(f"{path}: no sentences")
    stats["sentences"], stats["tokens"] = len(tokens), sum(map(len, tokens))
    ds = datasets.Dataset.from_dict({"tokens": tokens, "tags": tags, "tags_file": raw})
    return ds, stats


def from_hf_conll2003(ds: datasets.Dataset) -> datasets.Dataset:
    """The hub copy (``tokens``, ``ner_tags`` as class ids with their names) as the reader's rows."""
    names = ds.features["ner_tags"].feature.names  # IOB2 already
    return ds.map(
        lambda ex: {"tags": [names[t] for t in ex["ner_tags"]], "tags_file": [names[t] for t in ex["ner_tags"]]},
        remove_columns=[c for c in ds.column_names if c != "tokens"],
    )
