"""One task head beside its AllenNLP reference: same data, same biLM, matched settings; the dev curve
and the time of both sides.

    python -m benchmarks.conformance.compare --task nli --arm elmo --epochs 3 [--suite-seeds 0 1]
        [--reference-seeds 0] [--limit N] [--work DIR] [--out results/conformance]

Needs the harness's environment (``make conformance-env``: ``.venv-conformance``, allennlp 2.10.1 and
allennlp-models 2.10.1). The reference runs through ``allennlp_launcher.py`` in that environment, the
suite through ``run.py`` in this one, each on one thread, one after the other. Both read the
suite's embedded biLM (``elmo_core/pretrained/small``, already in the original format) and the files
the task's ``conformance.prepare`` writes under ``--work``. A side already finished under ``--work`` with the
same epochs, ``--limit`` and configuration (``read_back``) is read back, not run again.

Writes ``<out>/<task>_<arm>.json``: each run's dev metric after every epoch, wall seconds per epoch,
the CPU seconds of the whole process (``getrusage`` of the child: data reading and the suite's
activation cache included), the commands, the matched settings, the hardware, and when each side ran
with the suite's commit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.conformance.heads import heads
from suite_common.hashing import file_sha256

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_PYTHON = ROOT / ".venv-conformance" / "bin" / "python"
LAUNCHER = ROOT / "benchmarks" / "conformance" / "allennlp_launcher.py"
BILM = {
    "options": ROOT / "elmo_core/pretrained/small/options.json",
    "weights": ROOT / "elmo_core/pretrained/small/weights.hdf5",
}


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def suite_commit() -> str:
    """This checkout's commit, with ``+changes`` when tracked files differ from it."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    return head + ("+changes" if changed.stdout.strip() else "")


def run_dates(result: dict, done: Path) -> list[str]:
    """When a side ran: stored with it, or (sides written before dates were kept) its file's time less
    the process's wall seconds."""
    if "dates" in result:
        return result["dates"]
    end = datetime.datetime.fromtimestamp(done.stat().st_mtime, datetime.UTC)
    start = end - datetime.timedelta(seconds=result["process_wall_seconds"])
    return [start.isoformat(timespec="seconds"), end.isoformat(timespec="seconds")]


def _file_digests(config):
    """``config`` with each file an AllenNLP configuration names by ``options_file`` or ``weight_file``
    (the biLM) replaced by its content's sha256: the same biLM at another path is the same run."""
    if isinstance(config, dict):
        return {
            k: _sha256(v) if k in ("options_file", "weight_file") and isinstance(v, str) else _file_digests(v)
            for k, v in config.items()
        }
    if isinstance(config, list):
        return [_file_digests(v) for v in config]
    return config


def _sha256(path: str) -> str:
    return file_sha256(path) if Path(path).is_file() else f"absent: {path}"


def read_back(done: Path, epochs: int, data: dict, same: dict) -> dict | None:
    """A side already run under ``--work`` with as many epochs on as much training data (``--limit``; a side
    written before the limit was kept with it is taken as made with this one) and the same ``same`` entries
    (the reference's configuration, its biLM files compared by content; the suite's command), with its
    dates; else None."""
    if not done.exists():
        return None
    stored = json.loads(done.read_text())
    if len(stored["dev"]) != epochs or stored.get("limit", data["limit"]) != data["limit"]:
        return None
    if any(_file_digests(stored.get(key)) != _file_digests(json.loads(json.dumps(v))) for key, v in same.items()):
        return None
    return {**stored, "dates": run_dates(stored, done)}


def _run_timed(command: list[str], log: Path) -> tuple[int, float, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rc, round(cpu, 1), round(time.perf_counter() - start, 1)


def set_dotted(config: dict, assignment: str) -> None:
    """``model.include_start_end_transitions=true``: the value is JSON."""
    key, value = assignment.split("=", 1)
    *parents, name = key.split(".")
    node = config
    for part in parents:
        node = node[part]
    node[name] = json.loads(value)


def run_reference(task: str, arm: str, seed: int, epochs: int, data: dict, work: Path, extra=(), variant="") -> dict:
    out = work / f"reference_{arm}{'_' + variant if variant and extra else ''}_seed{seed}"
    done = out / "conformance_run.json"
    config, _, _ = heads()[task].reference_config(data["reference"], BILM, arm == "elmo", seed, epochs)
    for assignment in extra:
        set_dotted(config, assignment)
    if finished := read_back(done, epochs, data, {"config": config}):
        return finished
    config_path = out.with_suffix(".json")
    config_path.write_text(json.dumps(config, indent=1))
    command = [str(REFERENCE_PYTHON), str(LAUNCHER), str(config_path), str(out), heads()[task].PACKAGE]
    started = now()
    rc, cpu, wall = _run_timed(command, out.with_suffix(".log"))
    times = json.loads((out / "epoch_times.json").read_text()) if (out / "epoch_times.json").exists() else []
    if rc != 0 or len(times) < epochs:
        raise SystemExit(f"reference run failed (exit {rc}, {len(times)} epochs): see {out.with_suffix('.log')}")
    key = "validation_" + heads()[task].METRIC
    result = {
        "dev": [round(100 * e["metrics"][key], 2) for e in times],
        "epoch_seconds": [e["wall_seconds"] for e in times],
        "epoch_cpu_seconds": [e["cpu_seconds"] for e in times],
        "process_cpu_seconds": cpu,
        "process_wall_seconds": wall,
        "command": " ".join(
            [
                "python",
                "benchmarks/conformance/allennlp_launcher.py",
                config_path.name,
                "OUT",
                heads()[task].PACKAGE,
            ]
        ),
        "config": config,
        "dates": [started, now()],
        "limit": data["limit"],
    }
    done.write_text(json.dumps(result, indent=1))
    return result


def run_suite(task: str, arm: str, seed: int, epochs: int, data: dict, work: Path, extra=(), variant="") -> dict:
    name = f"suite_{arm}{'_' + variant if variant and extra else ''}_seed{seed}"
    done = work / f"{name}.json"
    _, overrides, _ = heads()[task].reference_config(data["reference"], BILM, arm == "elmo", seed, epochs)
    data_overrides = [f"{k}={v}" for k, v in data["suite"].items()]
    runs_root = work / "suite_runs" / name  # its own: the record read back is this run's, never another's
    args = [
        f"task={task}",
        "profile=paper",
        "source=local",
        f"+ablation={arm}",
        f"seed={seed}",
        "threads=1",
        f"trainer.max_epochs={epochs}",
        f"trainer.patience={epochs}",
        "task.model.vectors=null",  # the reference has no pretrained vectors offline: both sides start from Xavier
        *data_overrides,
        *overrides,
        *extra,
    ]
    shown = " ".join(["python", "run.py", *args, "runs_root=RUNS", "cache.dir=CACHE"])
    if finished := read_back(done, epochs, data, {"command": shown}):
        return finished
    command = [sys.executable, "run.py", *args, f"runs_root={runs_root}", f"cache.dir={work / 'cache'}"]
    started, commit = now(), suite_commit()
    rc, cpu, wall = _run_timed(command, work / f"{name}.log")
    records = sorted(runs_root.glob(f"{task}/*/results.json"), key=lambda p: p.stat().st_mtime)
    if rc != 0 or not records:
        raise SystemExit(f"suite run failed (exit {rc}): see {work}/{name}.log")
    record = json.loads(records[-1].read_text())
    key = "dev_" + record["metric"]
    elapsed = [e["seconds"] for e in record["epochs"]]  # the record's clock runs on from the first epoch
    result = {
        "dev": [round(e[key], 2) for e in record["epochs"]],
        "epoch_seconds": [round(b - a, 1) for a, b in zip([0.0, *elapsed], elapsed)],
        "process_cpu_seconds": cpu,
        "process_wall_seconds": wall,
        "command": shown,
        "data_sha256": record["identity"]["data_sha256"],
        "dates": [started, now()],
        "suite_commit": commit,
        "limit": data["limit"],
    }
    done.write_text(json.dumps(result, indent=1))
    return result


def hardware() -> str:
    model = ""
    if Path("/proc/cpuinfo").exists():
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    return f"{platform.machine()} {model}, {os.cpu_count()} CPUs, one thread per run"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", required=True, choices=sorted(heads()), help="the task to compare")
    p.add_argument("--arm", default="elmo", choices=["elmo", "baseline"], help="with ELMo (default) or without")
    p.add_argument("--epochs", type=int, default=3, help="epochs on both sides (default 3)")
    p.add_argument("--suite-seeds", type=int, nargs="+", default=[0, 1], help="the suite's seeds (default 0 1)")
    p.add_argument("--reference-seeds", type=int, nargs="*", default=[0], help="none: the suite's side alone")
    p.add_argument("--limit", type=int, default=None, help="training sentences / pairs / articles / documents")
    p.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get("TMPDIR", "/tmp")) / "elmo-conformance",
        help="data, runs and logs of both sides (default: $TMPDIR/elmo-conformance); finished sides are kept",
    )
    p.add_argument("--out", type=Path, default=ROOT / "results" / "conformance", help="where <task>_<arm>.json goes")
    p.add_argument("--suite-override", nargs="*", default=[], help="more run.py overrides for the suite's side")
    p.add_argument("--reference-override", nargs="*", default=[], help="KEY=JSON in the reference's configuration")
    p.add_argument("--variant", default="", help="the name of a comparison with an override (file suffix)")
    a = p.parse_args(argv)
    if not REFERENCE_PYTHON.exists():
        print(f"{REFERENCE_PYTHON} is missing: build it with `make conformance-env`", file=sys.stderr)
        return 2
    if bool(a.variant) != bool(a.suite_override or a.reference_override):
        raise SystemExit("error: --variant names a comparison with an override; give both or neither")
    work = a.work / a.task
    data = heads()[a.task].prepare(work / "data", a.limit)
    data = {
        side: {k: v if isinstance(v, list) else str(v) for k, v in d.items()} if isinstance(d, dict) else d
        for side, d in data.items()
    }
    data["limit"] = a.limit
    reference = {
        s: run_reference(a.task, a.arm, s, a.epochs, data, work, a.reference_override, a.variant)
        for s in a.reference_seeds
    }
    suite = {s: run_suite(a.task, a.arm, s, a.epochs, data, work, a.suite_override, a.variant) for s in a.suite_seeds}
    _, _, matched = heads()[a.task].reference_config(data["reference"], BILM, a.arm == "elmo", 0, a.epochs)
    dates = [d for side in (*reference.values(), *suite.values()) for d in side["dates"]]
    a.out.mkdir(parents=True, exist_ok=True)
    summary = {
        "task": a.task,
        "arm": a.arm
        + (f" ({' '.join(a.suite_override)} on the suite's side)" if a.suite_override else "")
        + (f" ({' '.join(a.reference_override)} on the reference's side)" if a.reference_override else ""),
        "epochs": a.epochs,
        "limit": a.limit,
        "notes": data["notes"],
        "matched": matched,
        "reference": reference,
        "suite": suite,
        "hardware": hardware(),
        "dates": [min(dates), max(dates)],  # from the first run's start to the last one's end
        "suite_commit": ", ".join(sorted({side.get("suite_commit") or suite_commit() for side in suite.values()})),
        "biLM": "elmo_core/pretrained/small",
        "biLM_weights_sha256": file_sha256(BILM["weights"]),  # which version: `small` is replaced when a biLM ships
        "command": "python -m benchmarks.conformance.compare " + " ".join(argv or sys.argv[1:]),
    }
    for side in summary["reference"].values():
        side.pop("config", None)
    path = a.out / f"{a.task}_{a.arm}{'_' + a.variant if a.variant else ''}.json"
    path.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
