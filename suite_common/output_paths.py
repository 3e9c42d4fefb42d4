"""Where the suite may write: never into a system folder or the filesystem's root, and never through a
symbolic link it did not make itself (a run or table folder received from someone else may hold links
that point anywhere). A link given as the output itself (``--out``, ``runs_root``) is resolved once and
said; a link inside a folder the suite writes is refused, naming it."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import StorageError

# system folders: neither they nor anything below them is an output folder
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
                "/sys", "/usr")  # fmt: skip
# shared top-level folders: they themselves are not an output folder (a folder below them may be)
SHARED_TOPS = ("/", "/home", "/media", "/mnt", "/opt", "/srv", "/tmp", "/var")


def forbidden_output(path: str | Path) -> str | None:
    """Why ``path`` may not be an output folder (a runs root, a run, sweep or table folder), or None."""
    resolved = Path(os.path.realpath(Path(path).expanduser()))
    text = str(resolved)
    if text in SHARED_TOPS:
        return f"{path} is {'the filesystem root' if text == '/' else 'a shared system folder'} ({text})"
    for tree in SYSTEM_TREES:
        if text == tree or text.startswith(tree + "/"):
            return f"{path} is inside the system folder {tree} ({text})"
    return None


def check_output(path: str | Path, what: str) -> None:
    """A ``StorageError`` naming ``what`` (the setting or option) when ``path`` may not be written into."""
    problem = forbidden_output(path)
    if problem:
        raise StorageError(f"{what}: {problem}; give a folder of your own (nothing was written)")


def first_link(directory: str | Path, names=None) -> Path | None:
    """The first symbolic link among ``directory``'s entries (those of ``names`` only, when given), its
    sub-folders included; None when there is none (or no such directory)."""
    directory = Path(directory)
    if not directory.is_dir() or directory.is_symlink():
        return None
    for root, dirs, files in os.walk(directory):
        for name in sorted(dirs + files):
            path = Path(root) / name
            if (names is None or Path(root) != directory or name in names) and path.is_symlink():
                return path
    return None


def refuse_links(directory: str | Path, what: str, names=None, itself: bool = False) -> None:
    """A ``StorageError`` naming the first link inside ``directory`` (see ``first_link``; ``itself``: or
    ``directory`` itself when it is a link): the suite writes there, and would write through it."""
    link = Path(directory) if itself and Path(directory).is_symlink() else first_link(directory, names)
    if link is not None:
        raise StorageError(
            f"{link} is a symbolic link (to {os.readlink(link)}) inside {what}; the suite does not write "
            "through links: remove it (nothing was written)"
        )
