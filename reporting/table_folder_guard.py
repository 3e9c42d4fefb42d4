"""What a report checks of its table folder (``--out``) and its runs roots before it writes anything
(the tables of Peters et al. 2018 are rebuilt whole into that folder): a link given as ``--out`` is
resolved once and said; the working directory, a folder above it, the filesystem root and system folders
are refused; so are a folder that cannot be written, links inside the folder (the report would write
through them) or inside a runs root (the report would not read through them), and a ``report.json``
that is not what a report writes. One report at a time writes a folder (``report_lock``). Each failure
is one line and leaves the folder as it was."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from suite_common.locks import acquire
from suite_common.output_paths import first_link, forbidden_output

REPORT_JSON_TYPES = {"profile": (str, type(None)), "bilm": (str, type(None)), "accept": list, "split": str,
                     "runs": list, "made": list}  # fmt: skip


def checked_out(out: Path) -> Path:
    """The folder the report writes: ``out``, or the folder it links to (said once); a folder that may not
    be a table folder stops the report in one line."""
    target = out
    if out.is_symlink():
        target = Path(os.path.realpath(out))
        print(f"--out {out} is a link to {target}: the tables are written there")
    cwd = Path.cwd().resolve()
    resolved = target.resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise SystemExit(
            f"error: --out {out} is the working directory or a folder above it; the report rebuilds its folder "
            "whole: give a folder of its own (nothing was written)"
        )
    if forbidden_output(resolved):
        raise SystemExit(f"error: --out {forbidden_output(resolved)}; give a folder of its own (nothing was written)")
    link = first_link(target)
    if link is not None:
        raise SystemExit(
            f"error: {link} is a symbolic link (to {os.readlink(link)}) inside the table folder {out}; the report "
            "does not write through links: remove it (nothing was written)"
        )
    unwritable = _unwritable(target)
    if unwritable:
        raise SystemExit(f"error: --out {out}: {unwritable}; nothing was written")
    return target


def _unwritable(out: Path) -> str | None:
    """Why the report could not write ``out`` (it writes the folder and a copy of it beside it), or None."""
    for folder in (out, out.parent) if out.exists() else (out.parent,):
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.exists() and os.statvfs(existing).f_flag & os.ST_RDONLY:
            return f"{existing} is on a read-only file system"
        if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
            return f"{existing} cannot be written (permission denied)"
    return None


def refuse_links_in_runs(roots: list[Path]) -> None:
    """A link inside a runs root (a task folder that points elsewhere) is one line naming it: the report
    reads no record through a link (a runs root given as a link is read where it points)."""
    for root in roots:
        link = first_link(root)
        if link is not None:
            raise SystemExit(
                f"error: {link} is a symbolic link (to {os.readlink(link)}) inside the runs root {root}; the report "
                "does not read records through links: give its target as another --runs"
            )


@contextlib.contextmanager
def report_lock(out: Path):
    """While the block runs, this report alone writes ``out``: a second one stops in one line (it never waits,
    so the lock file beside ``out`` is removed when the block ends)."""
    lock_file = out.parent / f".{out.name}.report-lock"
    try:
        handle = acquire(lock_file, wait=False)
    except OSError as e:
        raise SystemExit(
            f"error: --out {out}: cannot take its lock {lock_file} ({e.strerror}); nothing was written"
        ) from None
    if handle is None:
        raise SystemExit(
            f"error: another report is writing {out} now (it holds {lock_file}); run this one when it has ended "
            "(nothing was written)"
        )
    try:
        yield
    finally:
        lock_file.unlink(missing_ok=True)  # while held: a report refused meanwhile did not wait on it
        handle.close()


def read_report_json(out: Path) -> dict | None:
    """``<out>/report.json`` as a report wrote it, or None where there is none; anything else is one line."""
    path = out / "report.json"
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
    except ValueError as e:
        raise SystemExit(f"error: {path}: not JSON ({e}); delete it to rebuild {out} under new options") from None
    if not isinstance(stored, dict):
        raise SystemExit(f"error: {path}: a mapping of the report's options expected, not {type(stored).__name__}; "
                         f"delete it to rebuild {out}")  # fmt: skip
    for key, kinds in REPORT_JSON_TYPES.items():
        value = stored.get(key)
        if key in stored and not isinstance(value, kinds):
            raise SystemExit(f"error: {path}: {key}={value!r} is not what a report writes; delete it to rebuild {out}")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise SystemExit(f"error: {path}: {key}={value!r} is not a list of strings; delete it to rebuild {out}")
    return stored


def made_before(out: Path) -> set[str] | None:
    """The files the last report into ``out`` made (its ``report.json``'s ``made``), which this one may
    remove; None for a folder whose report predates that list (every file a report makes may go), and the
    empty set where no report wrote the folder (every file there is the user's own)."""
    stored = read_report_json(out)
    if stored is None:
        return set()
    return set(stored["made"]) if "made" in stored else None


def may_remove(name: str, made: set[str] | None) -> bool:
    return made is None or name in made
