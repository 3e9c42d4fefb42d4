"""Which record under a runs root has a run's identity, found without recomputing every record's digest at each
run's start (the finished-run reuse that makes interrupted sweeps resume).

The runs root is walked once per process (``record_paths``; a record this process writes is added with
``note_written``). Each record's digest is recomputed from its configuration, never read from it, and kept in
``<runs_root>/.record-digests.json`` under its path, size and modification time, and the code's own version:
a later process recomputes only the records that changed since, and all of them after the code changed. A
record the index names is read again and its digest recomputed before it is reused, so a stale or foreign
index can only make a finished run be missed (and trained again), never make another run's record be reused.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from suite_common.atomic_files import write_text_atomic
from suite_common.hashing import sha256_hex

INDEX_NAME = ".record-digests.json"
WALKED_NAMES = ("results.json", "finetune.json", "running.pid")  # records, and the marks of runs going
_PACKAGES = ("experiments", "tasks", "encoders", "suite_common", "elmo_core", "static_vectors")
_WALKED: dict[Path, dict[str, list[Path]]] = {}  # runs root (resolved) -> record name -> paths, this process


@cache
def code_version() -> str:
    """A digest of the suite's Python sources: the typed configuration a record's digest is computed with."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for package in _PACKAGES for p in (root / package).rglob("*.py"))
    return sha256_hex(b"".join(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() for p in files))[:16]


def record_paths(runs_root: Path, name: str) -> list[Path]:
    """Every ``name`` file below ``runs_root`` (links not followed), from one walk of the root per process;
    the paths start with ``runs_root`` as given (a relative root gives relative paths)."""
    root = Path(runs_root).resolve()
    if root not in _WALKED:
        found: dict[str, list[Path]] = {n: [] for n in WALKED_NAMES}
        for folder, dirs, files in os.walk(root) if root.is_dir() else ():
            dirs.sort()
            for n in WALKED_NAMES:
                if n in files:
                    found[n].append((Path(folder) / n).relative_to(root))
        _WALKED[root] = found
    return [Path(runs_root) / relative for relative in sorted(_WALKED[root].get(name, []))]


def note_written(path: Path) -> None:
    """A record this process has just written, added to the walks of the runs roots above it."""
    path = Path(path).resolve()
    for root, found in _WALKED.items():
        if root in path.parents and path.relative_to(root) not in found.setdefault(path.name, []):
            found[path.name].append(path.relative_to(root))


def forget_walks() -> None:
    """The next lookup walks its runs root again (tests, and a process that moved records)."""
    _WALKED.clear()


def _load_index(root: Path) -> dict:
    try:
        index = json.loads((root / INDEX_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    ok = isinstance(index, dict) and index.get("code") == code_version() and isinstance(index.get("records"), dict)
    return index["records"] if ok else {}


def _save_index(root: Path, entries: dict) -> None:
    if root.is_symlink() or (root / INDEX_NAME).is_symlink():  # never written through a link
        return
    try:
        write_text_atomic(root / INDEX_NAME, json.dumps({"code": code_version(), "records": entries}) + "\n")
    except OSError:  # a read-only runs root: the digests are recomputed next time
        pass


def find(
    runs_root: Path, digest: str, name: str, read_record, record_digest, keep: bool = True
) -> tuple[Path, dict] | None:
    """``(path, record)`` of the first ``name`` record below ``runs_root`` whose recomputed digest is ``digest``
    (``read_record(path) -> dict | None``, ``record_digest(record) -> str | None``); None if there is none.
    ``keep=False``: the index is read but not written (a dry run writes nothing)."""
    root = Path(runs_root).resolve()
    paths = record_paths(root, name)  # resolved: the index's keys are relative to the resolved root
    if not paths:
        return None
    entries, kept, changed = _load_index(root), {}, False
    match = None
    for path in paths:
        key = path.relative_to(root).as_posix()
        try:
            stat = path.stat()
        except OSError:
            continue
        entry = entries.get(key)
        if isinstance(entry, list) and len(entry) == 3 and entry[:2] == [stat.st_size, stat.st_mtime_ns]:
            found = entry[2]
        else:
            record = read_record(path)
            found, changed = (record_digest(record) if record is not None else None), True
        kept[key] = [stat.st_size, stat.st_mtime_ns, found]
        if found == digest and match is None:
            record = read_record(path)  # read again: the index only points, the record's own content decides
            if record is not None and record_digest(record) == digest:
                match = (path, record)
    if keep and (changed or set(kept) != set(entries)):
        _save_index(root, kept)
    return match
