"""Run bookkeeping for the recipes (``runner``): a run's identity, its ``results.json`` record,
and finding a finished run — so that sweeps resume and the tables (Peters et al. 2018, Tables 1-3)
are rebuilt from the records alone.

* Identity: ``config_hash`` of the resolved configuration less the keys that cannot change a
  result (``VOLATILE``), with ``elmo.position=paper`` spelled out as the task's own position.
* ``finished_run``: a record for the same identity in the run directory or anywhere below the
  runs root (the same configuration launched under another name is reused, not retrained).
* ``run_metadata``: what every record holds besides its metrics (biLM identity, hardware, date,
  command, the configuration).
* ``write_json_atomic``: records appear complete or not at all.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import torch

VOLATILE = ("device", "mode", "checkpoint", "runs_root", "demo")  # do not change a run's result


def comparable(resolved: dict) -> dict:
    """What decides a run's result: ``elmo.position=paper`` is the task's own position spelled out;
    ``trainer.equal_updates`` counts only where it changes the training (``data.fraction`` < 1), so
    records made before the key existed keep their identity."""
    out = {k: v for k, v in resolved.items() if k not in VOLATILE}
    elmo, task = out.get("elmo") or {}, out.get("task") or {}
    if elmo.get("position") == "paper" and task.get("elmo_position"):
        out["elmo"] = {**elmo, "position": task["elmo_position"]}
    trainer, data = out.get("trainer") or {}, out.get("data") or {}
    if "equal_updates" in trainer and (not trainer["equal_updates"] or float(data.get("fraction", 1.0)) >= 1):
        out["trainer"] = {k: v for k, v in trainer.items() if k != "equal_updates"}
    return out


def config_hash(resolved: dict) -> str:
    return hashlib.sha256(json.dumps(comparable(resolved), sort_keys=True).encode()).hexdigest()[:16]


def write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def finished_run(out_dir: Path, runs_root: Path, digest: str) -> dict | None:
    """A results.json for this configuration: in this run directory, or anywhere under runs_root
    (the same configuration launched under another name)."""
    candidates = [out_dir / "results.json"] + (sorted(runs_root.glob("**/results.json")) if runs_root.exists() else [])
    for path in candidates:
        if path.exists():
            try:
                previous = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            stored = previous.get("config")  # recomputed, so records written by older versions still match
            if previous.get("config_hash") == digest or (isinstance(stored, dict) and config_hash(stored) == digest):
                return previous
    return None


def hydra_choice(group: str) -> str | None:
    from hydra.core.hydra_config import HydraConfig
    return HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None


def run_metadata(cfg, out_dir: Path, bilm_identity: dict, resolved: dict, digest: str) -> dict:
    """What every results.json records besides its metrics: biLM identity, hardware, date, command."""
    return {"bilm": bilm_identity,
            "hardware": {"machine": platform.machine(), "cpus": os.cpu_count(),
                         "torch_threads": torch.get_num_threads(), "device": cfg.device},
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["python", "run.py", *sys.argv[1:]]), "ablation": hydra_choice("ablation"),
            "profile": hydra_choice("profile"), "run_dir": str(out_dir), "config_hash": digest, "config": resolved}
