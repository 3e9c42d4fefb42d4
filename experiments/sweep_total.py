"""One answer for a whole sweep's dry run (``python run.py -m +sweep=table2 ... mode=dry_run``; the
sweeps reproduce Peters et al. 2018, Tables 1-3 and Figure 1): how many runs would train, how many
are done already, how long the rest would take at the sweep's thread count, how much activation
cache would be built, and the most memory one run needs.

Hydra calls ``DryRunTotal`` after each job and once after the sweep (``hydra.callbacks`` in
``conf/config.yaml``). Cache entries that several runs share (the same text, encoder and batch
size) are counted, in size and in time, once. With a launcher that runs jobs in other processes
(joblib, submitit) the jobs' reports stay there and no total is printed.
"""

from __future__ import annotations

from typing import Any

from hydra.core.utils import JobStatus
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from encoders.activation_cache import size_text

from .time_estimate import duration_text


def sweep_total(reports: list[dict]) -> dict:
    """The totals of the dry-run ``reports`` of one sweep."""
    to_run = [r for r in reports if not str(r.get("would", "")).startswith(("skip", "stop"))]
    cache: dict[str, tuple[int, float]] = {}  # entry key -> (bytes, seconds to build), each entry once
    seconds = 0.0
    for r in to_run:
        seconds += float(r.get("estimated_seconds") or 0.0) - float(r.get("cache_seconds") or 0.0)
        for key, (size, build) in (r.get("cache") or {}).get("entries", {}).items():
            cache.setdefault(key, (size, build))
    seconds += sum(build for _, build in cache.values())
    memory = [float(r["peak_memory_gb"]) for r in reports if r.get("peak_memory_gb") is not None]
    return {
        "runs": len(reports),
        "to_train": sum(str(r.get("would", "")).startswith("train") for r in reports),
        "to_resume": sum(str(r.get("would", "")).startswith("resume") for r in reports),
        "done_already": sum(str(r.get("would", "")).startswith("skip") for r in reports),
        "would_stop": sum(str(r.get("would", "")).startswith("stop") for r in reports),
        "seconds": round(seconds, 1),
        "cache_bytes": sum(size for size, _ in cache.values()),
        "peak_memory_gb": max(memory, default=None),
    }


def total_text(total: dict, threads: Any) -> str:
    memory = f"{total['peak_memory_gb']:.1f} GB" if total["peak_memory_gb"] is not None else "unknown"
    return (
        f"sweep: {total['runs']} runs: {total['to_train']} to train, {total['to_resume']} to resume, "
        f"{total['done_already']} done already"
        + (f", {total['would_stop']} would stop (see above)" if total["would_stop"] else "")
        + f"; at most {duration_text(total['seconds'])} one after the other at threads={threads} "
        f"(each run's estimate, the shared activation cache built once), {size_text(total['cache_bytes'])} of "
        f"activation cache to build, {memory} the most one run needs"
    )


class DryRunTotal(Callback):
    def __init__(self) -> None:
        self.reports: list[dict] = []
        self.threads: Any = None

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        if config.get("mode") == "dry_run" and job_return.status == JobStatus.COMPLETED:
            if isinstance(job_return.return_value, dict):
                self.reports.append(job_return.return_value)
                self.threads = config.get("threads")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if self.reports:
            print(total_text(sweep_total(self.reports), self.threads), flush=True)
