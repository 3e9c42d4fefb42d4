"""Where runs live (the run machinery behind Peters et al. 2018's tables): a run directory per
configuration below the runs root, finding a finished run so that sweeps resume, ``<dir>@<digest>``
when a directory already holds another identity's record, the running marker of a run in progress,
and records written complete or not at all.

* ``finished_run``: a record with the same digest in the run directory or anywhere below the runs
  root (the same configuration launched under another name is reused, not retrained).
* ``record_dir``: two identities never share a directory.
* ``run_metadata``: what every record holds besides its measurements.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import sys
from pathlib import Path

from omegaconf import OmegaConf

from suite_common.atomic_files import process_alive, write_text_atomic
from suite_common.bounded_files import read_bounded
from suite_common.errors import DataError
from suite_common.machine import cpu_model

from . import runs_index
from .plan import record_digest
from .record import MAX_RECORD_BYTES, RECORD_VERSION


def read_record(path: Path) -> dict | None:
    try:
        record = json.loads(read_bounded(path, MAX_RECORD_BYTES, "run record").decode("utf-8"))
    except (DataError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def finished_run(
    out_dir: Path, runs_root: Path, digest: str, name: str = "results.json", keep_index: bool = True
) -> dict | None:
    """A record of this identity: in this run directory, its ``@digest`` sibling, or anywhere under
    runs_root (the same configuration launched under another name; ``runs_index``: one walk of the root
    per process, its digests kept unless ``keep_index=False``); its ``run_dir`` is where it is now."""
    for path in (out_dir / name, out_dir.with_name(f"{out_dir.name}@{digest}") / name):
        record = current_record(path) if path.exists() else None
        if record is not None and record_digest(record) == digest:  # recomputed: a stored hash is never trusted
            return {**record, "run_dir": str(path.parent)}
    found = runs_index.find(runs_root, digest, name, current_record, record_digest, keep=keep_index)
    return {**found[1], "run_dir": str(found[0].parent)} if found else None  # where it is now (roots move)


def current_record(path: Path) -> dict | None:
    """A record of today's format (another format is never reused), or None."""
    record = read_record(path)
    return record if record is not None and record.get("record_version") == RECORD_VERSION else None


def record_dir(out_dir: Path, digest: str, name: str = "results.json") -> Path:
    """Where this run's record goes: the launch directory, unless it holds another identity's record
    (another biLM, other data files, another code version): then ``<dir>@<digest>`` beside it."""
    existing = read_record(out_dir / name) if (out_dir / name).exists() else None
    if existing is None or (record_digest(existing) or existing.get("config_hash")) == digest:
        return out_dir
    alternative = out_dir.with_name(f"{out_dir.name}@{digest}")
    print(
        f"note: {out_dir / name} is another configuration's record (another biLM, data or code version); "
        f"it is kept, and this run is recorded in {alternative}",
        file=sys.stderr,
        flush=True,
    )
    return alternative


RUNNING = "running.pid"  # in a run directory while its run is going: "<host> <pid> <digest>"
LOCK = ".run.lock"  # held by the one process that runs in a directory (``claim``)
STARTED_ONLY = {"resolved_config.yaml", RUNNING, "run.log", LOCK}
LOG_DIRS = {"tensorboard", "mlruns", "wandb"}  # the live curves' folders (training_log): no result without a record
_CLAIMED: dict[Path, object] = {}  # run directory -> the lock this process holds on it


def running_digest(out_dir: Path) -> str | None:
    """The identity of the run going on in ``out_dir`` (None when its marker is absent or older)."""
    try:
        fields = (out_dir / RUNNING).read_text().split()
    except OSError:
        return None
    return fields[2] if len(fields) > 2 else None


def claim(out_dir: Path, digest: str) -> Path:
    """The directory this run may write into, held for it alone until ``mark_finished``: ``out_dir``, or
    while another configuration runs there ``<dir>@<digest>`` beside it (two configurations never share
    a directory); while the same configuration runs there, wait for it to finish (its record is then
    reused). The lock is released when the process ends, however it ends."""
    import time

    from suite_common.locks import acquire
    from suite_common.output_paths import refuse_links

    refuse_links(out_dir, "a run folder", itself=True)  # a received folder may point anywhere
    out_dir.mkdir(parents=True, exist_ok=True)
    if out_dir.resolve() in _CLAIMED:  # this process holds it already (a run of it stopped by an error, relaunched)
        mark_running(out_dir, digest)
        return out_dir
    lock = acquire(out_dir / LOCK, wait=False)
    if lock is None:
        other = running_digest(out_dir)
        for _ in range(50):  # the holder writes its marker right after taking the lock
            if other is not None:
                break
            time.sleep(0.1)
            other = running_digest(out_dir)
        if other != digest and not out_dir.name.endswith(f"@{digest}"):
            print(f"note: another configuration is running in {out_dir}; this run goes to @{digest} beside it",
                  file=sys.stderr, flush=True)  # fmt: skip
            return claim(out_dir.with_name(f"{out_dir.name}@{digest}"), digest)
        print(f"waiting: the same configuration is running in {out_dir}; its result will serve this launch",
              file=sys.stderr, flush=True)  # fmt: skip
        lock = acquire(out_dir / LOCK)
    _CLAIMED[out_dir.resolve()] = lock
    mark_running(out_dir, digest)
    return out_dir


def release_claims() -> list[Path]:
    """Release every run directory this process holds (a run that failed); returns them."""
    claimed = list(_CLAIMED)
    for d in claimed:
        (d / RUNNING).unlink(missing_ok=True)
        _CLAIMED.pop(d).close()
    return claimed


def stopped_message(claimed: set[Path]) -> str:
    """What a run stopped by the user (Ctrl-C) says of the same command launched again: it resumes after the
    last finished epoch where one of its directories kept a training state, else it starts over."""
    kept = [d for d in claimed if (d / "train_state.pt").is_file()]
    if kept:
        return (
            f"stopped (Ctrl-C); the same command resumes after the last finished epoch ({kept[0] / 'train_state.pt'})"
        )
    return "stopped (Ctrl-C); no epoch had finished: the same command starts over"


def remove_if_unused(out_dir: Path, runs_root: Path | None = None) -> None:
    """A run directory that holds nothing but what a run writes when it starts (Hydra's empty log, the curves
    of a run with no result) is removed: a run stopped or refused before it wrote anything, a launch whose
    configuration was found finished elsewhere, a directory claimed while the record turned up meanwhile. So
    are the folders above it, up to ``runs_root``, that it leaves empty. One configuration, one directory."""
    try:
        entries = list(out_dir.iterdir())
        if not all(
            (p.name in STARTED_ONLY and p.is_file() and (p.name != "run.log" or not p.stat().st_size))
            or (p.name in LOG_DIRS and p.is_dir() and not p.is_symlink())
            for p in entries
        ):
            return
        remove_started(out_dir)
        parent, root = out_dir.parent, Path(runs_root or out_dir.parent).resolve()
        while (
            parent.resolve() != root.parent
            and root in (parent.resolve(), *parent.resolve().parents)
            and not any(parent.iterdir())
        ):
            parent.rmdir()
            parent = parent.parent
    except OSError:
        pass


def remove_started(out_dir: Path) -> None:
    """A run directory holding only what a run writes when it starts (and its curves' folders), removed."""
    for p in out_dir.iterdir():
        if p.name in LOG_DIRS and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    out_dir.rmdir()


def mark_running(out_dir: Path, digest: str = "") -> None:
    (out_dir / RUNNING).write_text(f"{platform.node()} {os.getpid()} {digest}".rstrip() + "\n")


def mark_finished(out_dir: Path) -> None:
    """The run in ``out_dir`` has ended: its mark removed, its lock released, its record known to this process's
    walk of the runs root."""
    (out_dir / RUNNING).unlink(missing_ok=True)
    for name in ("results.json", "finetune.json"):
        if (out_dir / name).is_file():
            runs_index.note_written(out_dir / name)
    lock = _CLAIMED.pop(Path(out_dir).resolve(), None)
    if lock is not None:
        lock.close()


def remove_dead_runs(runs_root: Path) -> list[Path]:
    """Run directories below ``runs_root`` left by a run killed before it wrote anything (only its
    configuration and its ``running.pid``, whose process on this host is gone) are removed, with a
    task directory left empty; a run still going, or one on another host, is left alone."""
    removed = []
    root = Path(runs_root).resolve()
    for marker in runs_index.record_paths(root, RUNNING):
        if len(marker.relative_to(root).parts) != 3 or not marker.is_file():  # <task>/<run>/running.pid
            continue
        d = marker.parent
        try:
            host, pid = marker.read_text().split()[:2]
            if host != platform.node() or process_alive(int(pid)) or int(pid) == os.getpid():
                continue
            if {p.name for p in d.iterdir()} - STARTED_ONLY - LOG_DIRS:
                continue  # it wrote something: kept for the user to look at
            remove_started(d)
            removed.append(d)
            if not any(d.parent.iterdir()):
                d.parent.rmdir()
        except (OSError, ValueError):
            continue
    return removed


def write_json_atomic(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def hydra_choice(group: str) -> str | None:
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None


def data_set_choice() -> str | None:
    """The data set a launch chose by name (``data=wnut17``, a file of ``conf/data/``); None when the run
    reads its task's own data (the data group's default, ``<task>_<source>``)."""
    choice, task, source = hydra_choice("data"), hydra_choice("task"), hydra_choice("source")
    return None if choice in (None, f"{task}_{source}") else choice


def run_metadata(plan, out_dir: Path, encoder) -> dict:
    """What every record of a plan (``plan.RunPlan``) holds besides its metrics: the encoder (under
    ``bilm``, or ``transformer`` for a Transformer), run identity, hardware, date, command."""
    import torch

    encoder_identity = encoder.identity()
    kind = "transformer" if encoder_identity.get("kind") == "transformer" else "bilm"
    return {
        "record_version": RECORD_VERSION,
        kind: encoder_identity,
        "identity": plan.identity,
        "hardware": {
            "machine": platform.machine(),
            "cpu": cpu_model(),  # seeded runs repeat to the last digit on the same processor model
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "device": plan.run.device,
        },
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python", "run.py", *sys.argv[1:]]),
        "ablation": hydra_choice("ablation"),
        "profile": hydra_choice("profile"),
        **({"data_set": data_set_choice()} if data_set_choice() else {}),
        "run_dir": str(out_dir),
        "config_hash": plan.digest,
        "config": plan.resolved,
    }


def prepare_run_dir(plan, launch_dir: Path) -> tuple[Path, dict | None]:
    """``(run directory, finished record or None)`` of a plan (``plan.RunPlan``): a record of this identity
    anywhere below the runs root is reused where it is (its directory is returned; nothing is written under
    this launch's name: one configuration, one directory); otherwise the directory this run writes into
    (``record_dir``), marked as running."""
    runs_root = Path(plan.run.runs_root)
    for gone in remove_dead_runs(runs_root):
        print(f"removed {gone}: its run was stopped before it wrote anything", file=sys.stderr, flush=True)
    previous = finished_run(launch_dir, runs_root, plan.digest, plan.record_name)
    if previous is None:  # none yet: claim a directory (waiting for the same configuration running there)
        out_dir = claim(record_dir(launch_dir, plan.digest, plan.record_name), plan.digest)
        previous = finished_run(out_dir, runs_root, plan.digest, plan.record_name)  # one that finished meanwhile
        if previous is not None:
            mark_finished(out_dir)
            remove_if_unused(out_dir)
    if previous is not None:
        print(f"skipping: this configuration already has its result in {previous.get('run_dir')}", flush=True)
        return Path(previous["run_dir"]), previous
    if (out_dir / "train_state.pt").exists():  # a stopped run to resume: its own, or refused before anything is written
        from . import train_state

        train_state.read(out_dir / "train_state.pt", plan.digest)
    write_text_atomic(out_dir / "resolved_config.yaml", OmegaConf.to_yaml(OmegaConf.create(plan.resolved)))
    mark_running(out_dir, plan.digest)
    return out_dir, None
