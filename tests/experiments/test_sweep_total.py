"""A sweep's dry run ends with one total: runs to train and done, time at its thread count with the
shared activation cache built once, cache to build, the most memory one run needs."""

import os
import subprocess
import sys

from conftest import REPO, SHARED

from experiments.sweep_total import sweep_total, total_text


def _report(would, seconds, cache_seconds, entries, memory):
    return {
        "would": would,
        "estimated_seconds": seconds,
        "cache_seconds": cache_seconds,
        "cache": {"entries": entries},
        "peak_memory_gb": memory,
    }


def test_shared_cache_entries_count_once_and_finished_runs_not_at_all():
    shared = {"k1": [100, 30.0]}
    reports = [
        _report("train", 130.0, 30.0, shared, 1.0),  # 100 s of training after 30 s of cache
        _report("train", 130.0, 30.0, shared, 1.5),  # the same entry: built by the first
        _report("train", 80.0, 20.0, {"k2": [50, 20.0]}, 0.8),
        _report("skip: this configuration already has its record (x)", 999.0, 0.0, {}, 0.5),
        _report("resume after epoch 2 (x)", 40.0, 0.0, {}, 0.7),
    ]
    total = sweep_total(reports)
    assert total["seconds"] == 100 + 100 + 60 + 40 + 30 + 20
    assert total["cache_bytes"] == 150 and total["peak_memory_gb"] == 1.5
    assert (total["runs"], total["to_train"], total["to_resume"], total["done_already"]) == (5, 3, 1, 1)
    assert "5 runs: 3 to train, 1 to resume, 1 done already; at most 6 min" in total_text(total, 1)


def test_a_dry_run_sweep_prints_one_total(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ELMO_SHARED": str(SHARED), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "run.py", "-m", "task=nli", "profile=quick", "source=local", "+ablation=baseline,elmo",
         "seed=0,1", "mode=dry_run", "threads=1", f"runs_root={tmp_path / 'runs'}", f"cache.dir={tmp_path / 'c'}"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    totals = [line for line in done.stdout.splitlines() if line.startswith("sweep: ")]
    assert len(totals) == 1 and totals[0].startswith("sweep: 4 runs: 4 to train, 0 to resume, 0 done already")
    assert "of activation cache to build" in totals[0] and not (tmp_path / "runs").exists()  # nothing written
