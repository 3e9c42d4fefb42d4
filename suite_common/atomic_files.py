"""Files that appear complete or not at all, and no leftovers from processes that died.

Every output the suite writes (weights, checkpoints, embeddings, cache entries, run records) is
first written under a temporary name in the same directory, ``.<name>.tmp-<host>-<pid>``, then
renamed into place. A process killed before the rename leaves that temporary behind; the next
writer into the same directory removes every temporary whose process is gone
(``remove_dead_leftovers``). Temporaries of another host (a shared file system) are left alone:
their process cannot be checked from here.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"
_TEMPORARY = re.compile(r"^\..+\.tmp-(?:(?P<host>[A-Za-z0-9_]+)-)?(?P<pid>\d+)$")


def temporary_path(final: str | Path) -> Path:
    """Where to write ``final`` before renaming it into place."""
    final = Path(final)
    return final.with_name(f".{final.name}.tmp-{_HOST}-{os.getpid()}")


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_dead_leftovers(directory: str | Path) -> list[Path]:
    """Remove the temporaries in ``directory`` whose writing process (on this host) is gone; returns
    what was removed."""
    directory = Path(directory)
    removed = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if not match or match["host"] not in (None, _HOST):
            continue
        pid = int(match["pid"])
        if pid == os.getpid() or process_alive(pid):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def rename_into_place(tmp: str | Path, final: str | Path) -> None:
    """Rename a finished temporary (a file or a directory) to its final name in one step: the one
    ``os.replace`` of the suite (a reader sees the old or the new, never a part)."""
    os.replace(tmp, final)


def write_atomic(path: str | Path, write) -> None:
    """Call ``write(tmp)`` on a temporary beside ``path`` and rename it into place: ``path`` ends up
    complete or absent (dead writers' temporaries are cleared first). The one place every writer of
    the suite goes through; a write error is a ``StorageError`` naming ``path``."""
    path = Path(path)
    remove_dead_leftovers(path.parent)
    tmp = temporary_path(path)
    try:
        write(tmp)
        rename_into_place(tmp, path)
    except (OSError, RuntimeError) as e:  # a full disk reaches torch's writer as a RuntimeError
        from suite_common.errors import storage_error

        raise storage_error(path, e) from None
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text_atomic(path: str | Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def torch_save_atomic(obj, path: str | Path) -> None:
    """``torch.save`` that leaves ``path`` complete or absent (and clears dead writers' temporaries first)."""
    import torch

    write_atomic(path, lambda tmp: torch.save(obj, tmp))
