"""Where runs may write: never the filesystem root or a system folder (one line, nothing written), never
through a link inside a run folder, curves that cannot be written are a warning (the record is still
written), and the modes that write nothing use the user's own scratch folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO
from run_configs import tiny_ner_cfg

from experiments import runner
from experiments.hydra_dirs import scratch_dir
from experiments.run_config import as_run
from experiments.run_directories import claim
from experiments.training_log import open_training_log
from suite_common.errors import StorageError
from suite_common.output_paths import forbidden_output


@pytest.mark.parametrize("override", ["runs_root=/", "hydra.run.dir=/etc", "hydra.sweep.dir=/", "runs_root=/usr/x"])
def test_a_system_folder_is_refused_before_anything_is_written(override):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "run.py", "task=ner", "source=local", override], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "choose a folder of your own" in lines[0], done.stderr
    assert not os.path.exists("/ner") and not os.path.exists("/multirun.yaml")


def test_which_folders_are_forbidden(tmp_path):
    assert forbidden_output("/") and forbidden_output("/etc") and forbidden_output("/usr/local/x")
    assert forbidden_output("/tmp") and not forbidden_output(tmp_path / "runs") and not forbidden_output("/tmp/x")


def test_the_scratch_folder_is_the_users_own(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert scratch_dir() == tmp_path / "elmo-suite" / "scratch"


def test_a_link_inside_a_run_folder_is_refused_and_its_target_untouched(tmp_path):
    run_dir, target = tmp_path / "ner" / "run", tmp_path / "elsewhere.txt"
    run_dir.mkdir(parents=True)
    target.write_text("someone's file")
    (run_dir / "running.pid").symlink_to(target)
    with pytest.raises(StorageError, match="running.pid is a symbolic link"):
        claim(run_dir, "digest")
    assert target.read_text() == "someone's file"


def test_curves_that_cannot_be_written_are_a_warning_and_the_run_records(bilm_files, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "tensorboard").write_text("a file where the curves' folder goes")
    assert open_training_log("tensorboard", out) is None
    assert "cannot write the curves" in capsys.readouterr().err
    runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input")), out)
    assert json.loads((out / "results.json").read_text())["task"] == "ner"


def test_a_runs_root_above_the_working_directory_keeps_only_the_record(tmp_path):
    """``runs_root=..``: the run's record goes above the folder it was started in; a relaunch of the finished
    configuration with its seed spelled out (a different folder name), as a sweep or as a dry run, leaves no
    folder behind, outside the working directory or anywhere else."""
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir(), data.mkdir()
    sentences = "EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\ncall\tO\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n" * 4
    (data / "train").write_text(sentences), (data / "dev").write_text(sentences)
    base = [sys.executable, str(REPO / "run.py"), "task=ner", "source=local", "runs_root=..", "data=wnut17",
            f"data.dir={data}", "+ablation=baseline", "trainer.max_epochs=1", "trainer.min_updates=0"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for extra in ([], ["seed=0"], ["-m", "seed=0"], ["mode=dry_run"]):
        done = subprocess.run([*base, *extra], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (extra, done.stderr[-2000:])
    records = list(tmp_path.glob("ner/*/results.json"))
    assert len(records) == 1, records
    folders = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_dir()}
    run = records[0].parent.relative_to(tmp_path).as_posix()
    assert folders <= {"work", "data", "ner", run, f"{run}/tensorboard"}, folders
    assert not any(p.is_dir() and not any(p.iterdir()) for p in (tmp_path / "ner").iterdir())
