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
    """``(line number, line)`` for every line of a UTF-8 file, newline included."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start):
            if lineno == start and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _undecodable(path, lineno, raw, e) from None


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
