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


def test_this_process_own_recent_work_is_not_counted_as_another_process(monkeypatch):
    """A sequential sweep runs its jobs in one process: after a job that kept 2 cores busy for two
    minutes, the load average is this process's own, and the next job may use both cores."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "available_cpus", lambda: 2)
    monkeypatch.setattr(threads, "running_processes", lambda: 0)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (1.8, 1.5, 1.0))
    clock = {"wall": 1000.0, "cpu": 50.0}
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(threads.time, "process_time", lambda: clock["cpu"])
    monkeypatch.setattr(threads, "_SINCE", (880.0, 50.0 - 2 * 120))  # 2 cores busy for the last 120 s
    assert threads.choose_threads("auto") == 2
    clock["wall"] += 120.0  # then idle for 120 s while another process loads the machine
    assert threads.choose_threads("auto") == 1
