"""A run's identity: everything that can change its result and nothing else (Peters et al. 2018's
experiments are compared cell by cell, so a cell must hold one configuration's runs only).

It is derived from the typed configuration (``run_config.RunConfig``): each field declares beside
itself whether it counts (``suite_common.typed_config``; ``counted_config`` walks them), and every file
a run reads counts by its content, through ``run_file_hashes``, the one place those files are hashed
(``identity_parts`` puts each hash under the name its field gives). The task's code version comes
from the task's registration (``task_version``), never from a caller. ``run_digest`` hashes the
counted configuration together with ``identity`` (the files' hashes and the task code's version).
A record's digest is recomputed from its stored configuration and identity (``record_digest``).
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from operator import attrgetter
from pathlib import Path

from suite_common.errors import ConfigError
from suite_common.hashing import sha256_hex
from suite_common.typed_config import content_fields, counted, counts_in, plain
from tasks.common.data_files import data_files
from tasks.registry import is_probe_function, task_class

from .run_config import RunConfig, as_run

PROBE_VERSION = 1  # raise when a probe function's code changes its results (part of its records' identity)


@lru_cache(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    from elmo_core import file_sha256

    return file_sha256(path)


def content_sha256(path) -> str:
    """SHA-256 of a file's bytes (memoised per path, size and modification time); ``missing``
    for a file that is not there (the reader then reports it)."""
    p = Path(path)
    if not p.is_file():
        return "missing"
    st = p.stat()
    return _file_sha256(str(p.resolve()), st.st_size, st.st_mtime_ns)


def run_file_hashes(run: RunConfig, encoder) -> dict[str, str | None]:
    """The content hash of every file-valued field that counts in ``run``: an encoder's files through
    the encoder (it resolves the embedded default, presets and downloads), any other through
    ``content_sha256``; an unset field has none. A file-valued field nobody can hash stops the run."""
    hashes = {}
    for path in file_fields(run):
        group, name = path.split(".", 1)
        if group == "encoder":
            given = encoder.file_hashes()
            if name not in given:
                raise ConfigError(f"{path}: the {encoder.kind} encoder does not hash this file")
            hashes[path] = given[name]
            continue
        value = attrgetter(path)(run)
        hashes[path] = None if value is None else content_sha256(value)
    return hashes


def data_sha256(run: RunConfig) -> dict[str, str]:
    """split -> SHA-256 of each data file the run reads (``missing`` where it is not there)."""
    return {k: content_sha256(p) for k, p in data_files(plain(run.data)).items()}


def counted_config(run: RunConfig, hashes: dict[str, str]) -> dict:
    """What of the configuration decides the run's result (``typed_config.counted``), with
    ``elmo.position`` spelled out (``paper`` is the task's own position)."""
    out = counted(run, run, hashes)
    if "elmo" in out and run.position:
        out["elmo"] = {**out["elmo"], "position": run.position}
    for name in ("data", "encoder", "cache"):  # a group with nothing that counts is as no group
        if name in out and not out[name]:
            del out[name]
    if "encoder" in out:  # the kind always names the encoder a run reads
        out["encoder"] = {"kind": run.encoder.kind, **out["encoder"]}
    return out


def file_fields(run: RunConfig) -> dict[str, dataclasses.Field]:
    """Every file setting of this run's counting groups, by dotted path."""
    out = {}
    for f in dataclasses.fields(run):
        value = getattr(run, f.name)
        if dataclasses.is_dataclass(value) and counts_in(f, run):
            out.update(content_fields(type(value), f"{f.name}."))
    return out


def identity_parts(run: RunConfig, hashes: dict[str, str], data_sha256: dict, task_version: int | None) -> dict:
    """The run's identity: what its files hold (``hashes``: dotted field path -> SHA-256, from
    ``identity.run_file_hashes``; every counting file field must have one) and its task code's version."""
    identity = {"bilm_sha256": None, "data_sha256": data_sha256, "task_version": task_version}
    for path, f in file_fields(run).items():
        if path not in hashes:
            raise ConfigError(f"{path}: a file the run reads has no content hash (the identity would miss it)")
        if f.metadata.get("in_config"):
            if attrgetter(path)(run) is not None:
                identity.setdefault("files_sha256", {})[path] = hashes[path]
        else:
            identity[f.metadata["hash_name"]] = hashes[path]
    if "encoder_sha256" in identity:  # a Transformer run names no biLM
        del identity["bilm_sha256"]
    return identity


def task_version(name: str) -> int:
    """The version a task registered (``VERSION`` of its class; the probe functions share
    ``PROBE_VERSION``): raised when its code changes its results."""
    return PROBE_VERSION if is_probe_function(name) else task_class(name).VERSION


def make_identity(run: RunConfig, encoder) -> dict:
    """What the files of a run hold, and the version its task registered."""
    return identity_parts(run, run_file_hashes(run, encoder), data_sha256(run), task_version(run.task.name))


def digest_of(run: RunConfig, identity: dict) -> str:
    counted = counted_config(run, (identity or {}).get("files_sha256") or {})
    return sha256_hex(json.dumps({**counted, "identity": identity}, sort_keys=True))[:16]


def run_digest(resolved: dict, identity: dict) -> str:
    """The digest of a resolved configuration (a plain mapping, as records store it) with ``identity``."""
    return digest_of(as_run(resolved), identity)


def record_digest(record: dict) -> str | None:
    """The digest of a stored record; None when it has no identity, or when today's settings cannot
    describe its configuration (a key since removed): no run configured today is that run."""
    identity, config = record.get("identity"), record.get("config")
    if identity is None or not isinstance(config, dict):
        return None
    try:
        return run_digest(config, identity)
    except ConfigError:
        return None
