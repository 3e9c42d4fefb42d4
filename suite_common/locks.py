"""One kind of lock for everything the suite's processes share (a run directory, an activation cache
entry, a fine-tuned biLM): an exclusive ``flock`` on a lock file, released when the holder closes it
or its process dies, so a killed process never leaves a lock behind. Locks only work between
processes that see the same file system with working ``flock`` (not across hosts on every network
file system).
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def acquire(path: str | Path, wait: bool = True) -> IO | None:
    """Hold the lock of ``path`` (created with its directory if missing): the open lock file, to be
    closed to release it; with ``wait=False``, None when another process holds it. An ``OSError``
    when the lock file cannot be created (a read-only directory)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        handle.close()
        return None
    return handle


@contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """``with locked(path):`` the block runs while this process alone holds the lock (it waits for it)."""
    handle = acquire(path)
    try:
        yield
    finally:
        handle.close()
