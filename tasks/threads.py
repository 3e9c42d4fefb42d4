"""How many CPU threads torch uses for a run (``threads=auto`` by default).

Torch's default is one OpenMP thread per core. On a machine doing other work that is the slow
choice: threads spinning at a barrier wait for a core that another process holds (measured on 2
cores beside one busy process: 2.4 s per SST batch with 2 threads against 0.2 s with 1). ``auto``
takes the cores that are free now — the CPUs this process may use, less the other runnable
processes (the larger of the 1-minute load average and the count running at this instant) —
divided among the jobs of a parallel launcher, and at least one. ``OMP_NUM_THREADS`` or
``threads=N`` set it explicitly.
"""
from __future__ import annotations

import os


def busy_cores() -> int:
    """Other processes wanting a CPU now: the 1-minute load average, or the processes running at this
    instant (``/proc/loadavg``), whichever is larger; this process not counted."""
    busy = 0.0
    try:
        busy = os.getloadavg()[0]
    except OSError:
        pass
    try:
        running = int(open("/proc/loadavg").read().split()[3].split("/")[0]) - 1  # less this process
        busy = max(busy, running)
    except (OSError, ValueError, IndexError):
        pass
    return int(busy + 0.5)


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def choose_threads(setting, parallel_jobs: int = 1) -> int:
    """The thread count for ``threads=setting`` (``auto`` or a number)."""
    if setting not in (None, "auto"):
        return int(setting)
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    cpus = available_cpus()
    free = min(cpus, cpus - busy_cores())
    return max(1, free // max(1, parallel_jobs))


def parallel_jobs(n_jobs) -> int:
    """Jobs a launcher runs at once (joblib's convention: -1 = every CPU, -2 = all but one ...)."""
    if not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or n_jobs == 0:
        return 1
    return n_jobs if n_jobs > 0 else max(1, available_cpus() + 1 + n_jobs)
