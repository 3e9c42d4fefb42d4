"""A run killed before it wrote its record leaves nothing behind: the next launch removes its
directory (only its configuration and ``running.pid`` of a process that is gone)."""

import platform
import subprocess
import sys

from experiments.run_directories import RUNNING, mark_finished, mark_running, remove_dead_runs


def _started(root, name, pid, extra=()):
    d = root / "ner" / name
    d.mkdir(parents=True)
    (d / "resolved_config.yaml").write_text("seed: 0\n")
    (d / RUNNING).write_text(f"{platform.node()} {pid}\n")
    for f in extra:
        (d / f).write_text("x")
    return d


def test_only_dead_runs_that_wrote_nothing_are_removed(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        killed = _started(tmp_path, "killed", dead_pid)
        going = _started(tmp_path, "going", alive.pid)
        wrote = _started(tmp_path, "wrote", dead_pid, ["dev_predictions.conll"])
        other_host = _started(tmp_path, "elsewhere", dead_pid)
        (other_host / RUNNING).write_text(f"another-host {dead_pid}\n")
        assert remove_dead_runs(tmp_path) == [killed]
        assert not killed.exists() and going.exists() and wrote.exists() and other_host.exists()
    finally:
        alive.kill()
    alone = _started(tmp_path / "b", "killed", dead_pid)
    remove_dead_runs(tmp_path / "b")
    assert not alone.parent.exists()  # the task directory it left empty goes too


def test_a_finished_run_drops_its_marker(tmp_path):
    mark_running(tmp_path)
    assert (tmp_path / RUNNING).read_text().split()[0] == platform.node()
    mark_finished(tmp_path)
    assert not (tmp_path / RUNNING).exists()


def test_a_run_stopped_with_ctrl_c_before_its_first_epoch_leaves_no_directory(tmp_path):
    import os
    import signal
    import time

    from conftest import REPO, shared_path

    shared_path("data/conll2003/eng.train")
    runs = tmp_path / "runs"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    argv = ["task=ner", "source=local", f"runs_root={runs}", f"cache.dir={tmp_path / 'cache'}", "threads=1"]
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731 (test workers ignore it)
    run = subprocess.Popen([sys.executable, "run.py", *argv], cwd=REPO, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)  # fmt: skip
    deadline = time.time() + 600  # a loaded machine starts run.py slowly
    while not list(runs.glob(f"ner/*/{RUNNING}")) and time.time() < deadline and run.poll() is None:
        time.sleep(0.05)
    assert list(runs.glob(f"ner/*/{RUNNING}")), "the run never claimed its directory"
    run.send_signal(signal.SIGINT)  # while it embeds the training set, before any epoch
    _, err = run.communicate(timeout=600)
    assert run.returncode == 130, err[-2000:]
    assert "stopped (Ctrl-C); no epoch had finished: the same command starts over" in err and not runs.exists()


# Ctrl-C lands inside a library that turns the KeyboardInterrupt into its own error, as OmegaConf does when it is
# interrupted while it builds the run's resolved_config.yaml (its cleanup then meets a half-built node).
_CTRL_C_INSIDE_A_LIBRARY = """
import runpy, signal, sys
import omegaconf
import experiments.run_directories as run_directories

real_write = run_directories.write_text_atomic

def write(path, text, *args, **kwargs):
    if str(path).endswith("resolved_config.yaml"):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt as e:
            raise omegaconf.errors.ConfigKeyError("'NoneType' object has no attribute '_invalidate_flags_cache'") from e
    return real_write(path, text, *args, **kwargs)

run_directories.write_text_atomic = write
sys.argv = ["run.py", *sys.argv[1:]]
runpy.run_path("run.py", run_name="__main__")
"""


def test_ctrl_c_that_a_library_turns_into_its_own_error_is_still_a_stop(tmp_path):
    import signal

    from conftest import REPO

    runs = tmp_path / "runs"
    argv = ["task=ner", "source=sample", "profile=tiny", f"runs_root={runs}", f"cache.dir={tmp_path / 'cache'}"]
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731 (test workers ignore it)
    done = subprocess.run([sys.executable, "-c", _CTRL_C_INSIDE_A_LIBRARY, *argv, "threads=1"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, preexec_fn=default_sigint)  # fmt: skip
    assert done.returncode == 130, done.stderr[-2000:]
    assert "stopped (Ctrl-C); no epoch had finished: the same command starts over" in done.stderr
    assert "ConfigKeyError" not in done.stderr and not runs.exists()


def test_the_stop_message_says_whether_the_same_command_resumes_or_starts_over(tmp_path):
    """Ctrl-C: the promise of a resumption only where a training state was kept, else 'starts over'."""
    from experiments.run_directories import stopped_message

    started, resumable = tmp_path / "a", tmp_path / "b"
    started.mkdir()
    resumable.mkdir()
    assert stopped_message({started}) == "stopped (Ctrl-C); no epoch had finished: the same command starts over"
    (resumable / "train_state.pt").write_bytes(b"state")
    assert "resumes after the last finished epoch" in stopped_message({started, resumable})


def test_a_dead_run_with_only_its_curves_is_removed_one_with_a_state_is_kept(tmp_path):
    dead = _dead_pid()
    for name, extra in (("curves_only", None), ("with_state", "train_state.pt")):
        d = tmp_path / "ner" / name
        (d / "tensorboard").mkdir(parents=True)
        (d / "tensorboard" / "events.out.tfevents.1").write_bytes(b"x")
        (d / RUNNING).write_text(f"{platform.node()} {dead} abc\n")
        if extra:
            (d / extra).write_bytes(b"state")
    removed = remove_dead_runs(tmp_path)
    assert [p.name for p in removed] == ["curves_only"]
    assert (tmp_path / "ner" / "with_state" / "tensorboard").is_dir()


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_the_ctrl_c_watch_notes_a_stop_and_leaves_other_handlers_alone():
    import signal

    import pytest

    from experiments.run_errors import CtrlCWatch

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with CtrlCWatch() as watch, pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert watch.seen and signal.getsignal(signal.SIGINT) is signal.default_int_handler

        def own(signum, frame):  # a handler someone else installed (pretraining installs one)
            pass

        signal.signal(signal.SIGINT, own)
        with CtrlCWatch() as watch:
            signal.raise_signal(signal.SIGINT)
        assert not watch.seen and signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, before)
