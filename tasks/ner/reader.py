"""NER readers (CoNLL-2003: Tjong Kim Sang & De Meulder 2003), into ``datasets.Dataset``.

Local files (``data.dir``), by ``data.format``:

* ``conll2003`` (the default): the original 4 columns ``token POS chunk NER``, ``-DOCSTART-`` lines,
  a blank line between sentences;
* ``columns``: any file of one token per line with its tag in the last column (``token<TAB>tag``, as
  WNUT-17 and WikiANN are, or CoNLL-2003's own columns), ``-DOCSTART-`` lines skipped. A byte order
  mark anywhere (WNUT-17's dev file has two) is dropped, and a line holding nothing else is blank. When
  every token of a file starts with the same language prefix (WikiANN's ``en:``), it is dropped.

The tag scheme is the file's: IOB1 (a span may start with ``I-``) and IOB2 are both read, as their
spans are the same. Default source: the Hugging Face ``conll2003`` dataset. Every example keeps the
tags as in the file (``tags_file``: prediction files use the file's scheme), and ``tags`` in BIO/IOB2
for training and scoring.
"""

from __future__ import annotations

import re
from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import text_lines
from .tags import iob1_to_bio


def read_conll2003_file(path: str | Path) -> tuple[datasets.Dataset, dict]:
    """The original CoNLL-2003 layout: exactly 4 columns per token line."""
    return read_tagged_columns(path, columns=4)


def read_tagged_columns(path: str | Path, columns: int | None = None) -> tuple[datasets.Dataset, dict]:
    """One token per line, its tag in the last column (``columns``: exactly that many, else at least 2)."""
    path = Path(path)
    tokens, tags, raw, sent_tokens, sent_tags = [], [], [], [], []
    stats = {"docstart_lines": 0, "sentences": 0, "tokens": 0}
    widest = 0

    def flush():
        if sent_tokens:
            tokens.append(list(sent_tokens))
            raw.append(list(sent_tags))
            tags.append(iob1_to_bio(sent_tags))
            sent_tokens.clear()
            sent_tags.clear()

    for lineno, line in text_lines(path):
        line = line.rstrip("\n").replace("\ufeff", "")  # a byte order mark is no text, wherever it is
        if not line.strip():
            flush()
            continue
        if line.startswith("-DOCSTART-"):
            stats["docstart_lines"] += 1
            flush()
            continue
        cols = split_columns(line, path, lineno)
        if columns is not None and len(cols) != columns:
            raise DataFormatError(f"{path}:{lineno}: expected {columns} columns (token POS chunk NER), got {len(cols)}")
        if len(cols) < 2:
            raise DataFormatError(f"{path}:{lineno}: expected a token and its tag, got {len(cols)} column")
        tag = cols[-1]
        if tag != "O" and not (len(tag) > 2 and tag[:2] in ("B-", "I-")):
            raise DataFormatError(f"{path}:{lineno}: bad NER tag {tag!r} (O, B-TYPE or I-TYPE)")
        sent_tokens.append(cols[0])
        sent_tags.append(tag)
        widest = max(widest, len(cols))
    flush()
    if columns is None and widest > 2:  # the token is the first column and the tag the last: the rest is not read
        stats["columns"] = f"{widest}: token (first) and tag (last) read, {widest - 2} column between them not read"
        if widest > 3:
            stats["columns"] = stats["columns"].replace("column between", "columns between")
    if not tokens:
        raise DataFormatError(f"{path}: no sentences")
    if columns is None:
        tokens, stats["language_prefix_dropped"] = _without_language_prefix(tokens)
    stats["sentences"], stats["tokens"] = len(tokens), sum(map(len, tokens))
    ds = datasets.Dataset.from_dict({"tokens": tokens, "tags": tags, "tags_file": raw})
    return ds, stats


def split_columns(line: str, path: Path, lineno: int) -> list[str]:
    """A token line's columns: split at tabs where it has any, else at ASCII spaces. A column that still
    holds a space of any kind (a no-break space too) is refused: a token cannot hold one, and cutting it
    would read another token than the file's."""
    cols = [c for c in (_TABS if "\t" in line else _SPACES).split(line.strip(" \t")) if c]
    if _SPACE.search("".join(cols)):  # one search a line; the column is looked for only on a bad line
        k, col = next((k, col) for k, col in enumerate(cols, 1) if _SPACE.search(col))
        raise DataFormatError(f"{path}:{lineno}: column {k} ({col!r}) holds a space; a token cannot hold one")
    return cols


_TABS, _SPACES = re.compile(r"\t+"), re.compile(r"[ ]+")
_SPACE = re.compile(r"\s")  # in a str pattern: exactly the characters str.isspace() takes


def _without_language_prefix(tokens: list[list[str]]) -> tuple[list[list[str]], int]:
    """The tokens less the language prefix every one of them has (WikiANN: ``en:``), and how many had it."""
    prefixes = {m.group(0) if (m := re.match(r"[a-z]{2,3}:(?=.)", t)) else None for s in tokens for t in s}
    if len(prefixes) != 1 or None in prefixes:
        return tokens, 0
    cut = len(prefixes.pop())
    return [[t[cut:] for t in s] for s in tokens], sum(map(len, tokens))


def from_hf_conll2003(ds: datasets.Dataset) -> datasets.Dataset:
    """The hub copy (``tokens``, ``ner_tags`` as class ids with their names) as the reader's rows."""
    names = ds.features["ner_tags"].feature.names  # IOB2 already
    return ds.map(
        lambda ex: {"tags": [names[t] for t in ex["ner_tags"]], "tags_file": [names[t] for t in ex["ner_tags"]]},
        remove_columns=[c for c in ds.column_names if c != "tokens"],
    )
