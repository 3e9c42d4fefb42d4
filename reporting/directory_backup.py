"""A table directory rebuilt whole or not at all (the report of Peters et al. 2018's tables rewrites
every file of it): ``unchanged_on_failure`` copies the directory aside before the report writes,
and on any failure puts that copy back in its place. The copy goes back by renames (the failed
directory aside, the copy in), and where a rename is refused, entry by entry in place; only when
both fail does the error say so, naming where the copy is. A report killed outright (``kill -9``)
leaves its copy beside the directory: the next report puts it back first, since the directory may
be half rebuilt, and removes what failed reports left."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

from suite_common.atomic_files import process_alive
from suite_common.errors import StorageError

_LEFT = re.compile(r"^\.(?P<name>.+)\.(?P<kind>before|failed)-report-(?P<pid>\d+)$")


class RestoreFailed(StorageError):
    """The table directory could not be put back as it was; the message names the copy."""


def _beside(out: Path, kind: str, pid: int | None = None) -> Path:
    return out.with_name(f".{out.name}.{kind}-report-{pid or os.getpid()}")


def _copy_back(kept: Path, out: Path) -> None:
    """``out`` made to hold exactly what ``kept`` holds, entry by entry, where ``out`` cannot be renamed."""
    out.mkdir(exist_ok=True)
    wanted = {p.name for p in kept.iterdir()}
    for entry in out.iterdir():
        if entry.name not in wanted:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    shutil.copytree(kept, out, symlinks=True, dirs_exist_ok=True)


def put_back(kept: Path | None, out: Path) -> None:
    """``out`` as ``kept`` holds it (``kept`` None: ``out`` did not exist, and is removed). ``RestoreFailed``
    when neither the renames nor the copy in place could do it."""
    aside = _beside(out, "failed")
    try:
        if out.exists():
            os.rename(out, aside)
        if kept is not None:
            try:
                os.rename(kept, out)
            except OSError:
                if aside.exists():
                    os.rename(aside, out)
                raise
    except OSError as e:
        if kept is None:
            raise RestoreFailed(f"{out} was left by a failed report and could not be removed ({e})") from e
        try:
            _copy_back(kept, out)
        except OSError as again:
            raise RestoreFailed(
                f"{out} could not be put back as it was ({again}); its content before the report is in {kept}"
            ) from again
        shutil.rmtree(kept, ignore_errors=True)
    shutil.rmtree(aside, ignore_errors=True)
    if aside.exists():  # a file that cannot be removed (immutable): the next report tries again
        print(f"note: {aside} holds what the failed report wrote and could not all be removed; the next report retries")


def clean_up_dead_reports(out: Path) -> list[str]:
    """What reports killed before they ended left beside ``out``: a copy of the directory is put back
    (the directory may be half rebuilt), the remains of a failed one removed. Lines saying what was done."""
    said = []
    try:
        entries = sorted(out.parent.iterdir()) if out.parent.is_dir() else []
    except OSError:
        return said
    for entry in entries:
        left = _LEFT.match(entry.name)
        if not left or left["name"] != out.name or process_alive(int(left["pid"])):
            continue
        if left["kind"] == "before":
            put_back(entry, out)
            said.append(f"note: {out} put back as it was before a report that was stopped ({entry.name})")
        else:
            shutil.rmtree(entry, ignore_errors=True)
    return said


@contextlib.contextmanager
def unchanged_on_failure(out: Path):
    """``out`` exactly as it was unless the body succeeds (a refused record, a full disk, a file that
    cannot be written, an error drawing a figure)."""
    for line in clean_up_dead_reports(out):
        print(line)
    kept = _beside(out, "before")
    existed = out.exists()
    if existed:
        shutil.rmtree(kept, ignore_errors=True)
        try:
            shutil.copytree(out, kept, symlinks=True)
        except BaseException:
            shutil.rmtree(kept, ignore_errors=True)
            raise
    try:
        yield
    except BaseException:
        put_back(kept if existed else None, out)
        raise
    if existed:
        shutil.rmtree(kept, ignore_errors=True)
