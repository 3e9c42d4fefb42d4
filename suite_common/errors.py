"""The suite's own exception types. Library code (``elmo_core``, ``bert_core``, ``tasks``) raises these with a
message that names the file and line, or the configuration key, at fault; only the entry points
(``run.py`` and the ``python -m`` commands) turn them into one-line messages and exit codes.

* ``ConfigError``: an impossible or inconsistent setting (names the key).
* ``DataError``: malformed or unusable input data (names the file and line, or the example).
* ``WeightsError``: a biLM, checkpoint or model file that does not match what it claims to be.
* ``StorageError``: a file or directory the suite must write cannot be (disk full, read-only file
  system, no permission, out of memory while writing); names the path.
* ``EncoderError``: a Transformer directory or hub name that cannot be loaded, or a model that cannot
  do what the suite asks (no fast tokenizer, no hidden states).

All derive from ``ValueError`` as well, so callers that caught ``ValueError`` still do.
"""

from __future__ import annotations


class SuiteError(ValueError):
    """Base of every error the suite reports to its user as one line."""


class ConfigError(SuiteError):
    pass


class DataError(SuiteError):
    pass


class WeightsError(SuiteError):
    pass


class EncoderError(WeightsError):
    pass


class StorageError(SuiteError):
    pass


WRITE_ERRNOS = {
    28: "the disk is full",
    122: "the disk quota is used up",
    30: "the file system is read-only",
    13: "permission denied",
    1: "permission denied",
}  # ENOSPC, EDQUOT, EROFS, EACCES, EPERM


def storage_error(path, e: Exception) -> StorageError:
    """One line for an error met while writing ``path`` (an ``OSError``, or the ``RuntimeError`` that
    torch's file writer raises when the disk fills)."""
    errno = getattr(e, "errno", None)
    if errno is None and isinstance(e, RuntimeError) and _little_room(path):
        errno = 28  # torch's writer says "enforce fail ... unexpected pos" where the OS said ENOSPC
    why = WRITE_ERRNOS.get(errno) or getattr(e, "strerror", None) or f"{type(e).__name__}: {str(e)[:120]}"
    return StorageError(f"{path}: cannot write ({why}); nothing partial was kept")


def _little_room(path, margin: int = 1 << 20) -> bool:
    """Whether the file system of ``path`` has less than ``margin`` bytes free (unknown: False)."""
    import shutil
    from pathlib import Path

    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return shutil.disk_usage(where).free < margin
    except OSError:
        return False
