"""A run's identity: everything that can change its result and nothing else (Peters et al. 2018's
experiments are compared cell by cell, so a cell must hold one configuration's runs only).

``run_digest`` hashes the resolved configuration less the keys that cannot change a result
(``settings.VOLATILE``), less file paths (``settings.PATH_KEYS``: a moved checkout or another copy
of the same files is the same run), together with ``identity``: the SHA-256 of the biLM weights
(none when ELMo is not used), of every data file read, and the task's code version.
``elmo.position=paper`` is the task's own position spelled out. Which configuration keys count is
declared in ``settings.IDENTITY_KEYS``. Records written before identities existed are read through
``legacy_identity`` (their stored biLM hash, the data files their configuration names).
"""

from __future__ import annotations

import copy
import hashlib
import json
from functools import lru_cache
from pathlib import Path

from tasks.common.data_files import data_files

from .config_layout import BILM_KEYS, current_layout
from .settings import (
    CONTENT_KEYS,
    NEUTRAL,
    PATH_KEYS,
    VOLATILE,
    effective_position,
    uses_encoder,
    without_added_defaults,
)


def comparable(resolved: dict, identity: dict) -> dict:
    """What decides a run's result, in today's configuration layout (``config_layout.current_layout``
    reads a record of the earlier one): the configuration without the keys ``settings`` declares out
    of the identity (how and where it runs, paths, neutral keys) and without the hub copy's name when
    local files are read, plus ``identity`` (what the paths point at). Three conditions: ``encoder``
    counts only in a run that reads contextual layers (a baseline is the same run whichever encoder
    is named), and for a biLM only its reading settings (``BILM_KEYS``; its weights count by their
    SHA-256); ``trainer.equal_updates`` only where it changes the training (``data.fraction`` < 1);
    keys added later only away from their earlier value (``settings.ADDED_AT_DEFAULT``).
    ``elmo.position=paper`` is the task's own position spelled out."""
    out = copy.deepcopy(
        without_added_defaults(current_layout({k: v for k, v in resolved.items() if k not in VOLATILE}))
    )
    data = out.get("data")
    if isinstance(data, dict) and (data.get("dir") or any(data.get(f"{s}_path") for s in ("train", "dev", "test"))):
        out["data"] = {k: v for k, v in data.items() if not k.startswith("hf_")}  # the hub copy is not read
    for group, keys in [*PATH_KEYS.items(), *NEUTRAL.items()]:
        if isinstance(out.get(group), dict):
            out[group] = {k: v for k, v in out[group].items() if k not in keys}
            if not out[group]:  # nothing that counts is left: as a configuration without the group
                del out[group]
    for key in CONTENT_KEYS:  # a set path counts by its file's content (None stays None, as before the key counted)
        *parents, name = key.split(".")
        node = out
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(name) is not None:
            node[name] = "sha256:" + (identity.get("files_sha256") or {}).get(key, "unknown")
    encoder = out.pop("encoder", None) or {}
    if uses_encoder(out) and encoder.get("kind", "bilm") == "bilm":
        out["encoder"] = {"kind": "bilm", **{k: encoder[k] for k in BILM_KEYS if k in encoder}}
    elif uses_encoder(out):
        out["encoder"] = {k: v for k, v in encoder.items() if k not in BILM_KEYS or k == "batch_size"}
    if isinstance(out.get("elmo"), dict) and effective_position(out):  # position=paper spelled out
        out["elmo"] = {**out["elmo"], "position": effective_position(out)}
    trainer, data = out.get("trainer") or {}, out.get("data") or {}
    if "equal_updates" in trainer and (not trainer["equal_updates"] or float(data.get("fraction", 1.0)) >= 1):
        out["trainer"] = {k: v for k, v in trainer.items() if k != "equal_updates"}
    return {**out, "identity": identity}


def run_digest(resolved: dict, identity: dict) -> str:
    return hashlib.sha256(json.dumps(comparable(resolved, identity), sort_keys=True).encode()).hexdigest()[:16]


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


def make_identity(
    resolved: dict, bilm_sha256: str | None, task_version: int, encoder_sha256: str | None = None
) -> dict:
    """What the paths of a configuration point at, and the task code's version. A Transformer
    encoder's files go under ``encoder_sha256`` (absent for biLM runs, as in older records), and a
    Transformer run's identity names no biLM."""
    identity = {
        "bilm_sha256": bilm_sha256,
        "data_sha256": {k: content_sha256(p) for k, p in data_files(resolved.get("data") or {}).items()},
        "task_version": task_version,
    }
    files = {}
    for key in CONTENT_KEYS:
        value = resolved
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            files[key] = content_sha256(value)
    if files:  # only when set: the identities of runs without such files are as they were
        identity["files_sha256"] = files
    if encoder_sha256 is not None:
        identity["encoder_sha256"] = encoder_sha256
        if bilm_sha256 is None:
            del identity["bilm_sha256"]
    return identity


def legacy_identity(record: dict, finetuned_base=None) -> dict | None:
    """The identity of a record written before records stored one: its biLM hash (none for runs
    without ELMo) and the data files its configuration names, as they are now; None when those
    files are not here. Such records of runs with a fine-tuned biLM stored the fine-tuned weights'
    hash, while the identity names the base biLM: ``finetuned_base(record)`` finds it (None when
    not given or not found)."""
    config = record.get("config")
    if not isinstance(config, dict):
        return None
    bilm = (record.get("bilm") or {}).get("sha256") if record.get("elmo_position", "input") != "none" else None
    if bilm and record.get("bilm_finetune") and (current_layout(config).get("encoder") or {}).get("finetune"):
        bilm = finetuned_base(record) if finetuned_base else None
        if bilm is None:
            return None
    identity = make_identity(config, bilm, 1)
    options = (record.get("bilm") or {}).get("options")
    if bilm and options and Path(options).is_file():  # the options the weights were read with, as runs record now
        identity["bilm_options_sha256"] = content_sha256(options)
    return None if "missing" in identity["data_sha256"].values() else identity


def record_digest(record: dict) -> str | None:
    identity = record.get("identity") or legacy_identity(record)
    config = record.get("config")
    return run_digest(config, identity) if identity is not None and isinstance(config, dict) else None
