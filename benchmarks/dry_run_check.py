"""Whether ``mode=dry_run``'s "at most" holds: its estimate beside the real training time of the same
configuration (the run machinery of Peters et al. 2018's experiments, §4; Table 1's quick runs).

    python -m benchmarks.dry_run_check --runs RUNS [--tasks ner sst ...] [--arms baseline elmo] [--threads 1]
        [--override KEY=VALUE ...]

For each task and arm (``+ablation=baseline`` or ``+ablation=elmo``, quick profile, local data), the dry
run is made here now, in this process, exactly as ``run.py ... mode=dry_run`` makes it; the finished
records of the same configuration with seeds 0, 1 and 2 are looked up under ``RUNS`` by their
recomputed identity (the cache they read already built, as in the records). Printed per row: the
estimate of the training (without building the cache), the processor the records were made on, their
``train_seconds`` (least and most), and most / estimate. A row holds when that ratio is at most 1.
The estimate is only comparable with records made on the same processor under the same load: run this
beside as many other busy processes as the records had.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
from datetime import UTC, datetime
from pathlib import Path

from experiments import paper_numbers
from experiments.config_store import compose
from experiments.run_config import as_run
from suite_common.machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]
TASKS = tuple(paper_numbers.TASKS)  # the tasks of the quick tables, from the registry


def compose_run(task: str, arm: str, seed: int, threads: int, runs: Path, cache: Path | None, more=()):
    overrides = [f"task={task}", "profile=quick", "source=local", f"+ablation={arm}", f"seed={seed}"]
    overrides += [f"threads={threads}", f"runs_root={runs}", "mode=dry_run"]
    overrides += [f"cache.dir={cache}"] if cache else []
    overrides += list(more)
    return compose(overrides)


def records_of(task: str, arm: str, threads: int, runs: Path, cache: Path | None, more=()) -> list[dict]:
    from experiments.plan import RunPlan
    from experiments.run_directories import finished_run

    found = []
    for seed in (0, 1, 2):
        plan = RunPlan.resolve(as_run(compose_run(task, arm, seed, threads, runs, cache, more)))
        # no launch directory of its own: a record of this identity anywhere under the runs root
        record = finished_run(runs / task / "-", runs, plan.digest, plan.record_name)
        if record is not None:
            found.append(record)
    return found


def check(task: str, arm: str, threads: int, runs: Path, cache: Path | None, more=()) -> dict:
    from experiments.dry_run import dry_run

    with contextlib.redirect_stdout(io.StringIO()):  # the dry run's own report: only its numbers are kept
        report = dry_run(as_run(compose_run(task, arm, 0, threads, runs, cache, more)), estimate_finished=True)
    train = float(report["estimated_seconds"]) - float(report.get("cache_seconds") or 0.0)
    found = records_of(task, arm, threads, runs, cache, more)
    seconds = [float(r["train_seconds"]) for r in found]
    cpus = sorted({str((r.get("hardware") or {}).get("cpu", "?")) for r in found})
    row = {"task": task, "arm": arm, "estimate_s": round(train, 1), "records": len(seconds), "made_on": cpus}
    if seconds:
        row.update(
            actual_min_s=min(seconds), actual_max_s=max(seconds), max_over_estimate=over_estimate(max(seconds), train)
        )
    return row


def over_estimate(actual: float, estimate: float) -> float | None:
    """actual / estimate; None where the estimate rounds to no time at all (a tiny run): no ratio to hold."""
    return round(actual / estimate, 2) if estimate > 0 else None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, required=True, help="a runs root holding the quick Table 1 records")
    ap.add_argument("--cache", type=Path, help="their activation cache directory (cache.dir), if not the default")
    ap.add_argument(
        "--tasks",
        nargs="+",
        default=list(TASKS),
        choices=TASKS,
        help="the quick tasks to check (all of the tables' tasks)",
    )
    ap.add_argument(
        "--arms", nargs="+", default=["baseline", "elmo"], choices=["baseline", "elmo"], help="+ablation= of each row"
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the records' own: 1 for the sweeps)")
    ap.add_argument(
        "--override", nargs="*", default=[], help="more run.py overrides for every configuration (KEY=VALUE)"
    )
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    when = f"{datetime.now(UTC):%Y-%m-%dT%H:%M}Z"
    print(f"# {when}, {platform.machine()} {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"# here: {cpu_model()}")
    print("| task | arm | estimate (s) | records | made on | actual (s) | most / estimate |")
    print("|---|---|---|---|---|---|---|")
    for task in args.tasks:
        for arm in args.arms:
            cache = args.cache.resolve() if args.cache else None
            r = check(task, arm, args.threads, args.runs.resolve(), cache, args.override)
            actual = f"{r['actual_min_s']}–{r['actual_max_s']}" if r["records"] else "—"
            ratio = f"{r['max_over_estimate']:.2f}" if r.get("max_over_estimate") is not None else "—"
            made = ", ".join(r["made_on"]) or "—"
            print(f"| {task} | {arm} | {r['estimate_s']} | {r['records']} | {made} | {actual} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
