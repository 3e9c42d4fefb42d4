"""Reading the suite's text data files: UTF-8, line by line, with a damaged byte reported as the
project's ``DataError`` naming the file, line and column (never a ``UnicodeDecodeError`` from
deep inside a reader). A UTF-8 byte order mark at the start of a file is the encoding's signature,
not text: it is dropped (``utf-8-sig``), so it never becomes part of a first token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from suite_common.errors import DataError

BOM = b"\xef\xbb\xbf"


def _undecodable(path, lineno: int, raw: bytes, e: UnicodeDecodeError) -> DataError:
    return DataError(f"{path}:{lineno}: not UTF-8 text (byte {raw[e.start]:#04x} at column {e.start + 1})")


def text_lines(path: str | Path, start: int = 1) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line of a UTF-8 file, ending in ``\n`` (the last one may have none).
    Windows (``\r\n``) and old Mac (``\r``) line ends are line ends like ``\n``, so every reader sees the
    same lines whichever system wrote the file."""
    with open(path, "rb") as f:
        lineno = start
        for chunk in f:
            if lineno == start and chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
            for raw in chunk.splitlines(keepends=True) if b"\r" in chunk else (chunk,):
                ended = raw.endswith((b"\n", b"\r"))
                raw = raw.rstrip(b"\r\n") + (b"\n" if ended else b"")
                try:
                    yield lineno, raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise _undecodable(path, lineno, raw, e) from None
                lineno += 1


def read_text(path: str | Path) -> str:
    """The whole of a UTF-8 file."""
    raw = Path(path).read_bytes()
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = raw.rfind(b"\n", 0, e.start) + 1
        line = raw[line_start : raw.find(b"\n", e.start) if b"\n" in raw[e.start :] else len(raw)]
        shifted = UnicodeDecodeError(e.encoding, line, e.start - line_start, e.end - line_start, e.reason)
        raise _undecodable(path, raw.count(b"\n", 0, e.start) + 1, line, shifted) from None


def token_sentences(path: str | Path) -> list[list[str]]:
    """The sentences of a one-token-per-line file (the CoNLL layouts: the token in the first column, a blank line
    between sentences, ``-DOCSTART-`` lines between documents), read with ``text_lines``' line ends."""
    sentences, current = [], []
    for _, line in text_lines(path):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(fields[0])
    return [*sentences, current] if current else sentences
