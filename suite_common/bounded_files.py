"""Reading files that another person may have handed over (run records, kept predictions): only
regular files, never through a link, never more than a stated number of bytes, compressed or not.

A FIFO, a device or a directory under a record's name is refused before it is opened (reading it
could block or never end); a file over its limit is refused before it is read into memory; a gzip
stream that decompresses past its limit (a "bomb") is refused after at most limit + 1 bytes.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
from pathlib import Path

from .errors import DataError

MB = 1 << 20


def regular_file_size(path: str | Path, what: str) -> int:
    """The size of ``path``; ``DataError`` unless it is a regular file itself (not a link to one)."""
    try:
        info = os.lstat(path)
    except OSError as e:
        raise DataError(f"{path}: {what} unreadable ({e.strerror or e})") from None
    if stat.S_ISLNK(info.st_mode):
        raise DataError(f"{path}: {what} is a symbolic link; only a regular file is read")
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{path}: {what} is not a regular file (a directory, FIFO or device)")
    return info.st_size


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (``DataError`` otherwise)."""
    if regular_file_size(path, what) > limit:
        raise DataError(f"{path}: {what} is larger than {limit // MB} MB; refused")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise DataError(f"{path}: {what} unreadable ({e.strerror or e})") from None
    if len(data) > limit:  # it grew after the size check
        raise DataError(f"{path}: {what} is larger than {limit // MB} MB; refused")
    return data


def gunzip_bounded(data: bytes, limit: int, path: str | Path, what: str) -> bytes:
    """``data`` decompressed, at most ``limit`` bytes of it (``DataError`` when it would be more or
    is not gzip)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(limit + 1)
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: not a {what} (not gzip: {type(e).__name__})") from None
    if len(out) > limit:
        raise DataError(f"{path}: {what} decompresses to more than {limit // MB} MB; refused")
    return out


GB = 1 << 30
# a task's data file is read whole into memory: the largest one the tasks read (SNLI's training file,
# 0.47 GB) is under a quarter of this; a larger (or sparse) file is refused before it is opened
MAX_DATA_FILE_BYTES = 2 * GB
KINDS = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a named pipe (FIFO)", stat.S_ISCHR: "a character device",
         stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket"}  # fmt: skip


def data_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a task's data file (absent, not a regular file and which kind it is,
    or larger than ``MAX_DATA_FILE_BYTES``), or None. A link to a regular file is read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    kind = next((name for test, name in KINDS.items() if test(info.st_mode)), None)
    if kind or not stat.S_ISREG(info.st_mode):
        return f"{kind or 'not a file'}, not a regular file"
    if info.st_size > MAX_DATA_FILE_BYTES:
        return (
            f"{info.st_size / GB:.1f} GB, over the {MAX_DATA_FILE_BYTES // GB} GB a data file may have "
            "(MAX_DATA_FILE_BYTES, suite_common/bounded_files.py)"
        )
    return None
