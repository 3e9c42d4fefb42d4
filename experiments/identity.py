"""A run's identity: everything that can change its result and nothing else (Peters et al. 2018's
experiments are compared cell by cell, so a cell must hold one configuration's runs only).

It is derived from the typed configuration (``run_config.RunConfig``): each field declares beside
itself whether it counts (``suite_common.typed_config``), and every file a run reads counts by its
content, through ``run_file_hashes``, the one place those files are hashed. ``run_digest`` hashes the
counted configuration together with ``identity`` (the files' hashes and the task code's version).
A record's digest is recomputed from its stored configuration and identity (``record_digest``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from suite_common.hashing import sha256_hex
from tasks.common.data_files import data_files

from .run_config import RunConfig, counted_config, file_fields, identity_parts, typed


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
    from suite_common.errors import ConfigError

    hashes = {}
    for path in file_fields(run):
        group, name = path.split(".", 1)
        if group == "encoder":
            given = encoder.file_hashes()
            if name not in given:
                raise ConfigError(f"{path}: the {encoder.kind} encoder does not hash this file")
            hashes[path] = given[name]
            continue
        node = run
        for part in path.split("."):
            node = getattr(node, part)
        hashes[path] = None if node is None else content_sha256(node)
    return hashes


def data_sha256(run: RunConfig) -> dict[str, str]:
    """split -> SHA-256 of each data file the run reads (``missing`` where it is not there)."""
    from suite_common.typed_config import plain

    return {k: content_sha256(p) for k, p in data_files(plain(run.data)).items()}


def make_identity(run: RunConfig, encoder, task_version: int | None) -> dict:
    """What the files of a run hold, and its task code's version."""
    return identity_parts(run, run_file_hashes(run, encoder), data_sha256(run), task_version)


def digest_of(run: RunConfig, identity: dict) -> str:
    counted = counted_config(run, (identity or {}).get("files_sha256") or {})
    return sha256_hex(json.dumps({**counted, "identity": identity}, sort_keys=True))[:16]


def run_digest(resolved: dict, identity: dict) -> str:
    """The digest of a resolved configuration (a plain mapping, as records store it) with ``identity``."""
    return digest_of(typed(resolved), identity)


def record_digest(record: dict) -> str | None:
    """The digest of a stored record; None when it has no identity, or when today's settings cannot
    describe its configuration (a key since removed): no run configured today is that run."""
    from suite_common.errors import ConfigError

    identity, config = record.get("identity"), record.get("config")
    if identity is None or not isinstance(config, dict):
        return None
    try:
        return run_digest(config, identity)
    except ConfigError:
        return None
