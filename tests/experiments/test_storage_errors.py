"""Disk full, read-only roots, out of memory and bad thread counts reach the user as one line naming
the path or the setting, exit status 2, and leave nothing that blocks a retry."""

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from experiments.command_line import check_files_given, check_output_folders, read
from experiments.run_errors import one_line
from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import ConfigError, StorageError


def test_threads_zero_is_one_line_and_leaves_no_run_directory(tmp_path):
    from run_configs import run_tiny_ner

    done = run_tiny_ner(tmp_path, "threads=0", timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    import os

    from experiments.threads import THREADS_MAX

    assert [line for line in done.stderr.splitlines() if line.strip()] == [
        f"error: threads=0: must be auto or a whole number from 1 to {THREADS_MAX}"
        f" (this machine has {os.cpu_count()} CPUs); nothing was run"
    ]
    assert not (tmp_path / "runs").exists()


def test_a_full_disk_under_torch_save_names_the_file(tmp_path, monkeypatch):
    import torch

    def full(obj, f):  # what torch's zip writer raises when the disk fills
        raise RuntimeError("[enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file data/0")

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(StorageError, match=r"best.pt: cannot write \(RuntimeError: .*PytorchStreamWriter"):
        torch_save_atomic({"x": 1}, tmp_path / "best.pt")
    assert list(tmp_path.iterdir()) == []  # no temporary left


def test_torchs_unexpected_pos_on_a_full_disk_says_the_disk_is_full(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    import torch

    def full(obj, f):  # torch's zip writer when the disk filled in the middle of a tensor
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9, 0))
    with pytest.raises(StorageError, match=r"train_state.pt: cannot write \(the disk is full\)"):
        torch_save_atomic({"x": 1}, tmp_path / "train_state.pt")


@pytest.mark.parametrize(
    "error, expected",
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "/runs/ner/x/results.json"),
            "/runs/ner/x/results.json: cannot write (the disk is full); nothing partial was kept",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "/ro/runs"),
            "/ro/runs: cannot write (the file system is read-only)",
        ),
        (
            RuntimeError(
                "[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                "9999 bytes"
            ),
            "out of memory (",
        ),
    ],
)
def test_the_entry_point_turns_storage_and_memory_errors_into_one_line(error, expected, tmp_path):
    assert expected in one_line(error, tmp_path)


def test_programming_errors_keep_their_traceback(tmp_path):
    assert one_line(RuntimeError("shape mismatch"), tmp_path) is None
    assert one_line(OSError(errno.ENOENT, "no such file"), tmp_path) is None


def test_a_runs_root_that_cannot_be_written_stops_before_hydra(tmp_path, monkeypatch):
    import tempfile

    def refused(**kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(ConfigError, match=rf"runs_root=.*: {tmp_path} cannot be written \(permission denied\)"):
        check_output_folders(read([f"runs_root={tmp_path / 'a' / 'b'}"]))
    monkeypatch.undo()
    check_output_folders(read([f"runs_root={tmp_path / 'a' / 'b'}"]))  # writable: nothing said, nothing left
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_runs_root_or_output_directory_is_refused(value, monkeypatch):
    with pytest.raises(ConfigError, match="runs_root=.*an empty path"):
        check_output_folders(read([f"runs_root={value}"]))
    with pytest.raises(ConfigError, match="embed_sample.out=.*an empty path"):
        check_output_folders(read([f"embed_sample.out={value}"]))
    monkeypatch.setenv("ELMO_RUNS_ROOT", value)
    with pytest.raises(ConfigError, match="ELMO_RUNS_ROOT=.*an empty path"):
        check_output_folders(read([]))


def test_a_file_or_a_virtual_file_system_as_runs_root_is_one_line(tmp_path):
    (tmp_path / "f").write_text("x")
    for root in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(ConfigError, match=rf"{tmp_path / 'f'} is a file, not a directory"):
            check_output_folders(read([f"runs_root={root}"]))
    if Path("/proc/self").exists():
        with pytest.raises(ConfigError, match="runs_root=/proc/x: /proc/x is inside the system folder /proc"):
            check_output_folders(read(["runs_root=/proc/x"]))


@pytest.mark.parametrize("key", ["runs_root", "cache.dir", "data.dir", "data.train_path", "checkpoint"])
def test_an_empty_path_setting_is_one_line_and_writes_nothing(key, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    argv = ["task=nli", "source=local", "mode=dry_run", f"{key}=", f"hydra.run.dir={tmp_path / 'h'}"]
    if key != "runs_root":
        argv.append(f"runs_root={tmp_path / 'runs'}")
    done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: {key}=")
    assert "an empty path" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_a_file_setting_on_the_command_line_is_checked_before_anything_is_written(tmp_path):
    (tmp_path / "biLM").mkdir()
    (tmp_path / "biLM/lm_weights.hdf5").write_bytes(b"x")
    with pytest.raises(
        ConfigError, match=r"encoder.weights=.*weights.hdf5: no such file; .*biLM holds lm_weights.hdf5"
    ):
        check_files_given(read([f"encoder.weights={tmp_path / 'biLM/weights.hdf5'}"]))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match=r"data.train_path=.*fifo: a named pipe \(FIFO\), not a regular file"):
        check_files_given(read([f"data.train_path={tmp_path / 'fifo'}"]))
    with pytest.raises(ConfigError, match="data.dev_path=/dev/zero: a character device, not a regular file"):
        check_files_given(read(["data.dev_path=/dev/zero"]))
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(20 << 30)  # 20 GB of nothing, no disk used
    with pytest.raises(ConfigError, match=r"20.0 GB, over the 2 GB a data file may have \(MAX_DATA_FILE_BYTES"):
        check_files_given(read([f"data.train_path={tmp_path / 'sparse'}"]))
    later = ["encoder.weights=https://example.org/w.hdf5", "data.train_path=null", "seed=1",
             "data.dev_path=${oc.env:HOME}/dev.txt"]  # a URL, none, an interpolation: checked later  # fmt: skip
    check_files_given(read(later))


def test_a_missing_weights_file_is_one_line_and_leaves_no_directory(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    argv = ["task=nli", "source=local", "encoder.options=elmo_core/pretrained/small/options.json",
            f"encoder.weights={tmp_path / 'lm_weights.hdf5'}", f"runs_root={tmp_path / 'runs'}"]  # fmt: skip
    done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: encoder.weights={tmp_path / 'lm_weights.hdf5'}: no such file; nothing was run"
    )
    assert not (tmp_path / "runs").exists()


def test_a_data_file_that_is_not_a_regular_file_says_what_it_is(tmp_path):
    from omegaconf import OmegaConf

    from suite_common.errors import DataError
    from tasks.registry import task_class

    os.mkfifo(tmp_path / "eng.train")
    task = task_class("ner")(OmegaConf.create({"name": "ner"}))
    data = OmegaConf.create({"format": None, "dir": str(tmp_path), "train_path": None})
    with pytest.raises(DataError, match=r"eng.train: a named pipe \(FIFO\), not a regular file \(data.dir/data.train"):
        task.read_file(tmp_path / "eng.train", data, "train")
