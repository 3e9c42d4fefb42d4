"""The one place the suite computes SHA-256 (run identities, cache keys, file contents, downloads):
of bytes or text, of a file read in blocks, or incrementally (``new_sha256``)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path


def new_sha256():
    """An incremental SHA-256 (``update``, ``hexdigest``), for data that arrives in pieces."""
    return hashlib.sha256()


def sha256_hex(data: bytes | str) -> str:
    """The SHA-256 of ``data`` (text as UTF-8), hexadecimal."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def file_sha256(path: str | Path, block: int = 1 << 20) -> str:
    """The SHA-256 of a file's content, read ``block`` bytes at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(block), b""):
            digest.update(chunk)
    return digest.hexdigest()


def content_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's content, memoised per path, size and modification time; ``missing`` where
    there is no file (its reader then says so)."""
    p = Path(path)
    if not p.is_file():
        return "missing"
    st = p.stat()
    return _file_sha256(str(p.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)
