"""How many CPU threads torch uses for a run (``threads=auto`` by default).

Torch's default is one OpenMP thread per core. On a machine doing other work that is the slow
choice: threads spinning at a barrier wait for a core that another process holds (measured on 2
cores beside one busy process: 2.4 s per SST batch with 2 threads against 0.2 s with 1). ``auto``
takes the cores that are free now — the CPUs this process may use, less the other busy ones
(the larger of their measured use since the last look and the processes running at this instant) —
divided among the jobs of a parallel launcher, and at least one. ``OMP_NUM_THREADS`` or
``threads=N`` set it explicitly.
"""

from __future__ import annotations

import math
import os
import time

from suite_common.errors import ConfigError


def running_processes() -> int:
    """Other processes running at this instant (state R in ``/proc``; this one not counted). Only
    processes are counted, not threads: ``/proc/loadavg``'s own count includes this process's
    threads, which start while torch and the data libraries are imported."""
    me, count = os.getpid(), 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        count += state == b"R"
    return count


def _cpu_seconds() -> tuple[float, float, float] | None:
    """(wall clock, CPU seconds every core has been busy since boot, this process's CPU seconds), or None
    where ``/proc/stat`` cannot be read (not Linux). Busy: user, nice, system and interrupts; not idle,
    I/O wait or steal (a virtual machine's time spent on other guests)."""
    try:
        with open("/proc/stat", "rb") as f:
            user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in f.readline().split()[1:8])
    except (OSError, ValueError):
        return None
    busy = (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
    return time.monotonic(), busy, time.process_time()


# the start of the window busy_cores() measures: this module's import (run.py imports it first, so the first
# window spans the configuration's composition), then each call (in a sequential sweep, the previous job)
_SINCE = _cpu_seconds()
MIN_WINDOW_S = 0.5  # shorter windows are too few clock ticks (10 ms each) to tell 0.7 of a core


def others_busy() -> float:
    """Cores other processes kept busy, on average, since the last call (or the import): the machine's busy
    CPU time less this process's own, over the wall time. Unlike the 1-minute load average it does not
    count a process that has ended (``make demo``'s install just before the run), nor this process's work."""
    global _SINCE
    start = _SINCE
    if start is None:  # no /proc/stat: the 1-minute load average, less this process's own share
        try:
            return max(0.0, os.getloadavg()[0] - own_load())
        except (OSError, AttributeError):
            return 0.0
    time.sleep(max(0.0, MIN_WINDOW_S - (time.monotonic() - start[0])))
    end = _SINCE = _cpu_seconds()
    if end is None or end[0] <= start[0]:
        return 0.0
    return max(0.0, (end[1] - start[1]) - (end[2] - start[2])) / (end[0] - start[0])


_OWN_SINCE = (time.monotonic(), time.process_time())


def own_load() -> float:
    """This process's share of the 1-minute load average since it was last asked (or started), weighted as
    the load average weighs that stretch: in a sequential sweep the previous job's work is not another's."""
    global _OWN_SINCE
    wall, cpu = time.monotonic(), time.process_time()
    elapsed, used = wall - _OWN_SINCE[0], cpu - _OWN_SINCE[1]
    _OWN_SINCE = (wall, cpu)
    return (used / elapsed) * (1 - math.exp(-elapsed / 60)) if elapsed > 0 else 0.0


def busy_cores() -> int:
    """Cores other processes want now: their average since the last look (sustained work, ``others_busy``),
    or the processes running at this instant (work that started a moment ago), whichever is larger."""
    return max(int(others_busy() + 0.3), running_processes())  # a core counts as busy from 0.7 of it


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


THREADS_MAX = 4 * (os.cpu_count() or 1)  # beyond this OpenMP fails to start its threads (not a setting to try)


def threads_problem(setting) -> str | None:
    """What is wrong with a ``threads`` setting, if anything (the one check: ``run_config`` declares it)."""
    if setting == "auto" or (
        isinstance(setting, int) and not isinstance(setting, bool) and 1 <= setting <= THREADS_MAX
    ):
        return None
    return f"must be auto or a whole number from 1 to {THREADS_MAX} (this machine has {os.cpu_count()} CPUs)"


def choose_threads(setting, parallel_jobs: int = 1) -> int:
    """The thread count for ``threads=setting`` (``auto`` or a number)."""
    if setting not in (None, "auto"):
        if problem := threads_problem(setting):
            raise ConfigError(f"threads={setting!r}: {problem}")
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


def set_torch_threads(run) -> int:
    """torch's CPU threads for ``run`` (``threads``; ``auto`` divides the free cores among the jobs of a parallel
    launcher), said in one line."""
    import torch
    from hydra.core.hydra_config import HydraConfig

    launcher = HydraConfig.get().launcher if HydraConfig.initialized() else {}
    threads = choose_threads(run.threads, parallel_jobs(launcher.get("n_jobs") if "n_jobs" in launcher else 1))
    torch.set_num_threads(threads)
    print(f"torch threads: {threads} (threads={run.threads})", flush=True)
    return threads
