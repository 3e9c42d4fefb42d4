"""How a run's start and the report grow with the runs root (the run machinery of Peters et al. 2018's
experiments, §4): a group's shared runs root holds tens of thousands of records.

    python -m benchmarks.runs_root_scale [--records 10000] [--small 100] [--work DIR]

One tiny NER baseline run is trained (a few sentences, one epoch) and its record, with its kept predictions,
copied ``--records`` times into a runs root. Measured in this process and in fresh ones, beside an empty root:

* a run's start: the lookups a launch makes before it trains (``prepare_run_dir``'s removal of dead runs and
  its two searches for a finished record of its identity), for an identity the root does not hold (the whole
  root is searched). Cold: the first process after the records arrived (every digest recomputed and indexed);
  warm: a later process (``experiments.runs_index``'s index read, nothing recomputed);
* the report: ``python -m reporting.report`` over the root, whole process, for ``--small`` and for ``--records``
  copies; per record, the whole time over the records and the marginal time (the difference over the
  difference in records).

Targets: a run's start at most 1 s slower than in an empty root; the report at most 10 ms a record.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from suite_common.machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = "EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\ncall\tO\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n" * 4
TINY = ["task=ner", "source=local", "data=wnut17", "+ablation=baseline", "trainer.max_epochs=1",
        "trainer.min_updates=0"]  # fmt: skip
ACCEPT = ["--accept", "data.dir", "trainer.max_epochs", "trainer.min_updates"]
START = """
import sys, time
from pathlib import Path
from experiments.run_directories import finished_run, remove_dead_runs
root = Path(sys.argv[1])
started = time.perf_counter()
remove_dead_runs(root)
launch = root / "ner" / "a-new-configuration"
finished_run(launch, root, "0123456789abcdef")
finished_run(launch, root, "0123456789abcdef")
print(time.perf_counter() - started)
"""


def run(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv[:3])} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def template(work: Path) -> Path:
    """A tiny NER baseline run's folder (its record and kept predictions)."""
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "train").write_text(SENTENCES)
    (data / "dev").write_text(SENTENCES)
    run([str(ROOT / "run.py"), *TINY, f"data.dir={data}", f"runs_root={work / 'template'}"], ROOT)
    return next((work / "template" / "ner").iterdir())


def fill(root: Path, source: Path, n: int) -> Path:
    for k in range(n):
        d = root / "ner" / f"copy{k:05d}"
        d.mkdir(parents=True)
        for name in ("results.json", "dev_predictions.json.gz"):
            shutil.copy2(source / name, d / name)
    return root


def start_seconds(root: Path) -> float:
    """A fresh process's lookups at a run's start (the seconds measured inside it, imports left out)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", START, str(root)], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: the start's lookups failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def report_seconds(root: Path, out: Path) -> float:
    return run(["-m", "reporting.report", "--runs", str(root), "--out", str(out), *ACCEPT], ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.runs_root_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000, help="copies of the record in the large runs root")
    parser.add_argument("--small", type=int, default=100, help="the smaller root of the report's marginal time")
    parser.add_argument("--work", type=Path, help="a folder for the roots (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)  # a folder named on the command line need not exist yet
    work = Path(tempfile.mkdtemp(prefix="runs-root-scale-", dir=args.work))
    try:
        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {cpu_model()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}; {args.records:,} records", flush=True)  # fmt: skip
        source = template(work)
        empty = work / "empty"
        empty.mkdir()
        big, small = fill(work / "big", source, args.records), fill(work / "small", source, args.small)
        base = min(start_seconds(empty) for _ in range(3))
        cold = start_seconds(big)
        warm = min(start_seconds(big) for _ in range(3))
        print(f"run start: empty root {base:.3f} s; {args.records:,} records: first process {cold:.2f} s "
              f"(+{cold - base:.2f} s, digests computed and indexed), later processes {warm:.3f} s "
              f"(+{warm - base:.3f} s; target at most +1 s)")  # fmt: skip
        t_small = report_seconds(small, work / "out-small")
        t_big = report_seconds(big, work / "out-big")
        marginal = (t_big - t_small) / (args.records - args.small)
        print(f"report: {args.small:,} records {t_small:.1f} s, {args.records:,} records {t_big:.1f} s; "
              f"{1000 * t_big / args.records:.2f} ms a record in all, {1000 * marginal:.2f} ms a record marginal "
              "(target at most 10 ms)")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
