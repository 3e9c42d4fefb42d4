"""Answers about one record computed once per report (the tables of Peters et al. 2018 are made from thousands
of records, and each is asked the same questions by several tables): ``per_record`` memoizes a function of a
record object and further hashable arguments; ``read`` reads a record file once while it is unchanged."""

from __future__ import annotations

import functools
from pathlib import Path

from experiments.record import Record

_READ: dict[Path, tuple[tuple[int, int], Record]] = {}


def per_record(fn):
    """``fn(r, *args)`` computed once per record object and arguments; the record is kept with its answers,
    so that its ``id`` is never another record's while the answer is kept."""
    memo: dict = {}

    @functools.wraps(fn)
    def once(r, *args):
        key = (id(r), tuple(tuple(a) if isinstance(a, list) else a for a in args))
        hit = memo.get(key)
        if hit is None or hit[0] is not r:
            hit = memo[key] = (r, fn(r, *args))
        return hit[1]

    once.cache_clear = memo.clear
    return once


def read(path: Path) -> Record:
    """``Record.read(path)``, the same object again while the file keeps its size and modification time
    (``RecordSchemaError`` as ``Record.read`` raises it)."""
    path = Path(path)
    stat = path.stat()
    stamp = (stat.st_size, stat.st_mtime_ns)
    hit = _READ.get(path)
    if hit is None or hit[0] != stamp:
        hit = _READ[path] = (stamp, Record.read(path))
    return hit[1]
