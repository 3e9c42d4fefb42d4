"""``threads=auto``: torch threads from the cores free now, divided among a launcher's jobs."""

import pytest

from experiments import threads


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)

    def set_machine(cpus, busy):
        monkeypatch.setattr(threads, "available_cpus", lambda: cpus)
        monkeypatch.setattr(threads, "busy_cores", lambda: busy)

    return set_machine


@pytest.mark.parametrize(
    "cpus,busy,jobs,expected",
    [
        (2, 0, 1, 2),  # idle laptop: every core
        (2, 1, 1, 1),  # one other busy process: one thread, not two spinning on one core
        (2, 3, 1, 1),  # overloaded: still one
        (16, 2, 1, 14),
        (16, 0, 4, 4),  # a 4-job parallel sweep shares the cores
        (2, 0, 2, 1),
    ],
)
def test_auto_takes_the_free_cores_divided_among_jobs(machine, cpus, busy, jobs, expected):
    machine(cpus, busy)
    assert threads.choose_threads("auto", jobs) == expected


def test_explicit_settings_win(machine, monkeypatch):
    machine(8, 0)
    assert threads.choose_threads(3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.choose_threads("auto") == 1


def test_joblib_job_counts(machine):
    machine(4, 0)
    assert threads.parallel_jobs(2) == 2 and threads.parallel_jobs(-1) == threads.available_cpus()
    assert threads.parallel_jobs(None) == 1


@pytest.fixture
def cpu_clock(monkeypatch):
    """``/proc/stat``'s and this process's CPU seconds, set by the test: (wall, machine busy, own)."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    monkeypatch.setattr(threads, "running_processes", lambda: 0)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.8, 1.5, 1.0))  # high, and not read
    clock = {"now": (1000.0, 500.0, 50.0)}
    monkeypatch.setattr(threads, "_cpu_seconds", lambda: clock["now"])
    monkeypatch.setattr(threads, "_SINCE", clock["now"])
    monkeypatch.setattr(threads.time, "sleep", lambda s: None)  # the windows here are the test's clock
    return clock


def test_this_process_own_recent_work_is_not_counted_as_another_process(cpu_clock):
    """A sequential sweep runs its jobs in one process: after a job that kept 2 cores busy for two
    minutes, the busy time is this process's own, and the next job may use both cores."""
    cpu_clock["now"] = (1120.0, 500.0 + 240, 50.0 + 240)
    assert threads.choose_threads("auto") == 2
    cpu_clock["now"] = (1240.0, 740.0 + 120, 290.0)  # then idle for 120 s while another process keeps a core busy
    assert threads.choose_threads("auto") == 1
    cpu_clock["now"] = (1250.0, 860.0 + 6, 290.0)  # 0.6 of a core: not busy
    assert threads.choose_threads("auto") == 2


def test_a_process_that_ended_before_the_run_is_not_counted(cpu_clock):
    """``make demo``: the install kept a core busy for a minute and ended; the 1-minute load average
    still says 1.8, the cores are free."""
    cpu_clock["now"] = (1001.5, 500.1, 50.8)  # the run's own start-up, 1.5 s
    assert threads.busy_cores() == 0 and threads.choose_threads("auto") == 2


def test_the_load_average_less_own_work_where_there_is_no_proc_stat(cpu_clock, monkeypatch):
    monkeypatch.setattr(threads, "_SINCE", None)
    wall = {"t": 1000.0}
    monkeypatch.setattr(threads.time, "monotonic", lambda: wall["t"])
    monkeypatch.setattr(threads.time, "process_time", lambda: 50.0)
    monkeypatch.setattr(threads, "_OWN_SINCE", (880.0, 50.0 - 2 * 120))  # 2 cores busy for the last 120 s
    assert threads.busy_cores() == 0  # 1.8 of load, about 1.73 of it this process's own
    wall["t"] += 120.0  # then idle while another process loads the machine
    assert threads.busy_cores() == 2  # int(1.8 + 0.3)


def test_the_machines_own_clock_is_read_and_a_short_window_is_waited_out(monkeypatch):
    """On this (Linux) machine: /proc/stat is read, busy time only grows, and a window shorter than
    MIN_WINDOW_S is lengthened to it (fewer clock ticks cannot tell 0.7 of a core)."""
    import time

    first = threads._cpu_seconds()
    assert first is not None and first[1] > 0
    monkeypatch.setattr(threads, "_SINCE", first)
    busy = threads.others_busy()
    assert 0.0 <= busy <= threads.available_cpus() + 0.5
    assert threads._SINCE[0] - first[0] >= threads.MIN_WINDOW_S and threads._SINCE[1] >= first[1]
    assert time.monotonic() - threads._SINCE[0] < 5
