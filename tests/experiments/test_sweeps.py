"""A real multirun through a Hydra launcher plugin (submitit_local), and resuming a sweep."""

import json
import os
import subprocess
import sys

from conftest import REPO, SAMPLES, random_bilm

from elmo_core import save_bilm


def _multirun(tmp_path, launcher):
    save_bilm(random_bilm(), tmp_path / "o.json", tmp_path / "w.hdf5")
    cmd = [
        sys.executable,
        "run.py",
        "-m",
        f"hydra/launcher={launcher}",
        "task=ner",
        "elmo.position=none,input",
        f"data.dir={SAMPLES['ner']}",
        "data.train_file=ner_tiny.conll",
        "data.dev_file=ner_tiny.conll",
        f"encoder.options={tmp_path / 'o.json'}",
        f"encoder.weights={tmp_path / 'w.hdf5'}",
        f"cache.dir={tmp_path / 'cache'}",
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        "task.model.hidden=[4]",
        "task.model.char_filters=2",
        "task.model.word_dim=4",
    ]
    if launcher == "submitit_local":
        cmd += [f"hydra.launcher.submitit_folder={tmp_path / 'submitit'}", "hydra.launcher.timeout_min=5"]
    env = {**os.environ, "ELMO_RUNS_ROOT": str(tmp_path / "runs"), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_submitit_local_launcher_runs_the_sweep_and_resumes(tmp_path):
    proc = _multirun(tmp_path, "submitit_local")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = sorted((tmp_path / "runs" / "ner").glob("*/results.json"))
    assert len(results) == 2
    assert [json.loads(p.read_text())["config"]["elmo"]["position"] for p in results] == ["input", "none"]
    assert all("elmo.position:" in p.parent.name for p in results)  # named after their overrides
    first = [json.loads(p.read_text())["date"] for p in results]
    again = _multirun(tmp_path, "submitit_local")  # an interrupted/finished sweep resumes: nothing is redone
    assert again.returncode == 0
    assert [json.loads(p.read_text())["date"] for p in results] == first
