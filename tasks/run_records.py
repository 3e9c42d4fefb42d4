"""Run bookkeeping for the recipes (``runner``): a run's identity, its ``results.json`` record,
and finding a finished run — so that sweeps resume and the tables (Peters et al. 2018, Tables 1-3)
are rebuilt from the records alone.

* Identity: everything that can change a result and nothing else. ``run_digest`` hashes the
  resolved configuration less the keys that cannot change a result (``VOLATILE``) and less file
  paths (``PATH_KEYS``: a moved checkout or another copy of the same files is the same run),
  together with ``identity``: the SHA-256 of the biLM weights (none when ELMo is not used), the
  SHA-256 of every data file read, and the task's code version. ``elmo.position=paper`` is the
  task's own position spelled out.
* ``finished_run``: a record with the same digest in the run directory or anywhere below the runs
  root (the same configuration launched under another name is reused, not retrained).
* ``record_dir``: two identities never share a directory: when the launch directory already holds
  another identity's record, this run's record goes to ``<dir>@<digest>`` beside it.
* Records written before identities existed are read through ``legacy_identity`` (their stored
  biLM hash, the data files their configuration names) and rewritten by ``migrate``
  (``python -m tasks.record_migration DIR...``).
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import os
import platform
import sys
from functools import lru_cache
from pathlib import Path

from suite_common.atomic_files import process_alive, remove_dead_leftovers, temporary_path

from .config_layout import current_layout, earlier_identity, earlier_layout
from .data_files import data_files
from .run_settings import (
    CONTENT_KEYS,
    NEUTRAL,
    PATH_KEYS,
    VOLATILE,
    effective_position,
    uses_encoder,
    without_added_defaults,
)

RECORD_NAMES = ("results.json", "finetune.json")


def comparable(resolved: dict, identity: dict) -> dict:
    """What decides a run's result: the configuration without paths (and without the hub copy's
    name when local files are read), plus ``identity`` (what the paths point at), in the layout
    before #28 (``config_layout.earlier_layout``: identities did not change when keys moved).
    ``elmo.position=paper`` is the task's own position spelled out;
    ``trainer.equal_updates`` counts only where it changes the training (``data.fraction`` < 1);
    keys added later count only away from their earlier value (``run_settings.ADDED_AT_DEFAULT``);
    ``encoder`` only when it is not the biLM (records made before the key existed keep their identity)
    and the run reads contextual layers (a baseline is the same run whichever encoder is named)."""
    out = copy.deepcopy(
        without_added_defaults(current_layout({k: v for k, v in resolved.items() if k not in VOLATILE}))
    )
    data = out.get("data")
    if isinstance(data, dict) and (data.get("dir") or any(data.get(f"{s}_path") for s in ("train", "dev", "test"))):
        out["data"] = {k: v for k, v in data.items() if not k.startswith("hf_")}  # the hub copy is not read
    for group, keys in [*PATH_KEYS.items(), *NEUTRAL.items()]:
        if isinstance(out.get(group), dict):
            out[group] = {k: v for k, v in out[group].items() if k not in keys}
    for key in CONTENT_KEYS:  # a set path counts by its file's content (None stays None, as before the key counted)
        *parents, name = key.split(".")
        node = out
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(name) is not None:
            node[name] = "sha256:" + (identity.get("files_sha256") or {}).get(key, "unknown")
    out = earlier_layout(out)
    if (out.get("encoder") or {}).get("kind", "bilm") == "bilm" or not uses_encoder(out):
        out.pop("encoder", None)  # the biLM (as before the key existed), or no contextual layers at all
    if isinstance(out.get("elmo"), dict) and effective_position(out):  # position=paper spelled out
        out["elmo"] = {**out["elmo"], "position": effective_position(out)}
    trainer, data = out.get("trainer") or {}, out.get("data") or {}
    if "equal_updates" in trainer and (not trainer["equal_updates"] or float(data.get("fraction", 1.0)) >= 1):
        out["trainer"] = {k: v for k, v in trainer.items() if k != "equal_updates"}
    return {**out, "identity": earlier_identity(identity)}


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
    Transformer run's identity names no biLM (``config_layout.earlier_identity`` hashes it as before)."""
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
    return None if "missing" in identity["data_sha256"].values() else identity


def record_digest(record: dict) -> str | None:
    identity = record.get("identity") or legacy_identity(record)
    config = record.get("config")
    return run_digest(config, identity) if identity is not None and isinstance(config, dict) else None


def read_record(path: Path) -> dict | None:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def finished_run(out_dir: Path, runs_root: Path, digest: str, name: str = "results.json") -> dict | None:
    """A record of this identity: in this run directory, its ``@digest`` sibling, or anywhere under
    runs_root (the same configuration launched under another name); its ``run_dir`` is where it is now."""
    own = [out_dir / name, out_dir.with_name(f"{out_dir.name}@{digest}") / name]
    candidates = own + (sorted(runs_root.glob(f"**/{name}")) if runs_root.exists() else [])
    for path in candidates:
        record = read_record(path) if path.exists() else None
        if record is not None and (record.get("config_hash") == digest or record_digest(record) == digest):
            return {**record, "run_dir": str(path.parent)}  # where it is now (a runs root may have moved)
    return None


def record_dir(out_dir: Path, digest: str, name: str = "results.json") -> Path:
    """Where this run's record goes: the launch directory, unless it holds another identity's record
    (another biLM, other data files, another code version): then ``<dir>@<digest>`` beside it."""
    existing = read_record(out_dir / name) if (out_dir / name).exists() else None
    if existing is None or record_digest(existing) == digest:
        return out_dir
    alternative = out_dir.with_name(f"{out_dir.name}@{digest}")
    print(
        f"note: {out_dir / name} is another configuration's record (another biLM, data or code version); "
        f"it is kept, and this run is recorded in {alternative}",
        file=sys.stderr,
        flush=True,
    )
    return alternative


def run_dir_name(overrides: str, limit: int = 120) -> str:
    """A run directory's name: its overrides (``key:value+key:value``), or when they are longer than
    ``limit`` characters their start and a hash of the whole (file names have a length limit). A ``/``
    in a value becomes ``%2F`` and a name of dots only is prefixed, so a name never leaves the runs root."""
    overrides = overrides.replace("/", "%2F").replace("\\", "%5C")
    if overrides.strip(".") == "":
        overrides = f"_{overrides}"
    if len(overrides.encode("utf-8")) <= limit:
        return overrides
    head = overrides.encode("utf-8")[: limit - 12].decode("utf-8", "ignore").rstrip("+")
    return f"{head}+{hashlib.sha256(overrides.encode('utf-8')).hexdigest()[:10]}"


RUNNING = "running.pid"  # in a run directory while its run is going: "<host> <pid>"
STARTED_ONLY = {"resolved_config.yaml", RUNNING, "run.log"}


def mark_running(out_dir: Path) -> None:
    (out_dir / RUNNING).write_text(f"{platform.node()} {os.getpid()}\n")


def mark_finished(out_dir: Path) -> None:
    (out_dir / RUNNING).unlink(missing_ok=True)


def remove_dead_runs(runs_root: Path) -> list[Path]:
    """Run directories below ``runs_root`` left by a run killed before it wrote anything (only its
    configuration and its ``running.pid``, whose process on this host is gone) are removed, with a
    task directory left empty; a run still going, or one on another host, is left alone."""
    removed = []
    for marker in sorted(Path(runs_root).glob(f"*/*/{RUNNING}")) if Path(runs_root).is_dir() else []:
        d = marker.parent
        try:
            host, pid = marker.read_text().split()
            if host != platform.node() or process_alive(int(pid)) or int(pid) == os.getpid():
                continue
            if {p.name for p in d.iterdir()} - STARTED_ONLY:
                continue  # it wrote something: kept for the user to look at
            for p in d.iterdir():
                p.unlink()
            d.rmdir()
            removed.append(d)
            if not any(d.parent.iterdir()):
                d.parent.rmdir()
        except (OSError, ValueError):
            continue
    return removed


def write_text_atomic(path: Path, text: str) -> None:
    """``path`` with ``text``, complete or absent."""
    remove_dead_leftovers(path.parent)
    tmp = temporary_path(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def hydra_choice(group: str) -> str | None:
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None


def run_metadata(cfg, out_dir: Path, encoder_identity: dict, resolved: dict, identity: dict) -> dict:
    """What every record holds besides its metrics: the encoder (under ``bilm``, or ``transformer``
    for a Transformer), run identity, hardware, date, command."""
    import torch

    kind = "transformer" if encoder_identity.get("kind") == "transformer" else "bilm"
    return {
        kind: encoder_identity,
        "identity": identity,
        "hardware": {
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "device": cfg.device,
        },
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python", "run.py", *sys.argv[1:]]),
        "ablation": hydra_choice("ablation"),
        "profile": hydra_choice("profile"),
        "run_dir": str(out_dir),
        "config_hash": run_digest(resolved, identity),
        "config": resolved,
    }


def migrate(roots: list[Path], finetuned_base=None) -> tuple[int, int]:
    """Give every record below ``roots`` its identity (``legacy_identity``) and digest (the digest it
    had before is kept as ``config_hash_before_identity``); records with an identity get their digest
    recomputed. Returns (rewritten, already current)."""
    from suite_common.errors import DataError

    done = current = 0
    for root in roots:
        for path in sorted(p for name in RECORD_NAMES for p in Path(root).glob(f"**/{name}")):
            record = read_record(path)
            if record is None:
                raise DataError(f"{path}: not a JSON record")
            if "identity" in record:
                digest = run_digest(record["config"], record["identity"])
                if record.get("config_hash") == digest:
                    current += 1
                    continue
                record = {**record, "config_hash": digest}  # the identity rules changed since it was written
                write_json_atomic(path, record)
                done += 1
                continue
            identity = legacy_identity(record, finetuned_base)
            if identity is None:
                raise DataError(
                    f"{path}: the data files its configuration names (or, for a fine-tuned biLM, "
                    "its base biLM) are not here; cannot migrate"
                )
            record = {
                **record,
                "identity": identity,
                "config_hash_before_identity": record.get("config_hash"),
                "config_hash": run_digest(record["config"], identity),
            }
            write_json_atomic(path, record)
            done += 1
    return done, current
