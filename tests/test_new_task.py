"""A new task is one folder and its config file: a toy seventh task, added to a copy of the suite, trains
through ``run.py`` and is reported by ``reporting.report`` with nothing else changed."""

import os
import random
import shutil
import subprocess
import sys

from conftest import FIXTURES, REPO

TOY = FIXTURES / "toy_task"
CODE = ["run.py", "conf", "elmo_core", "bert_core", "encoders", "tasks", "experiments", "reporting", "suite_common"]


def copy_of_the_suite(root):
    root.mkdir()
    for name in CODE:
        source, target = REPO / name, root / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)


def files(root):
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def polarity_data(directory, n, seed):
    rng = random.Random(seed)
    good, bad = ["good", "great", "fine", "lovely"], ["bad", "awful", "poor", "dull"]
    lines = []
    for k in range(n):
        label = k % 2
        words = rng.sample(good if label else bad, 2) + rng.sample(["the", "film", "was", "a", "plot"], 3)
        rng.shuffle(words)
        lines.append(f"{label}\t{' '.join(words)}\n")
    directory.mkdir(parents=True, exist_ok=True)
    return lines


def test_a_toy_task_in_one_folder_trains_through_run_py_and_is_reported(tmp_path):
    suite = tmp_path / "suite"
    copy_of_the_suite(suite)
    before = files(suite)
    shutil.copytree(TOY / "tasks" / "toy", suite / "tasks" / "toy")
    shutil.copy2(TOY / "conf" / "task" / "toy.yaml", suite / "conf" / "task" / "toy.yaml")
    added = files(suite) - before
    assert {p.parts[:2] for p in added} == {("tasks", "toy"), ("conf", "task")} and len(added) == 7
    assert all((suite / p).read_bytes() == (REPO / p).read_bytes() for p in before)  # nothing else changed

    data = tmp_path / "shared" / "data" / "toy"
    lines = polarity_data(data, 48, 0)
    (data / "train.tsv").write_text("".join(lines[:32]))
    (data / "dev.tsv").write_text("".join(lines[32:]))
    env = {**os.environ, "ELMO_SHARED": str(tmp_path / "shared"), "HF_HUB_OFFLINE": "1"}
    runs = tmp_path / "runs"
    train = subprocess.run(
        [sys.executable, "run.py", "-m", "task=toy", "source=local", "+ablation=baseline,elmo", "seed=0,1",
         "threads=1", f"runs_root={runs}", f"cache.dir={tmp_path / 'cache'}"],
        cwd=suite, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr[-3000:]
    assert len(list(runs.glob("toy/*/results.json"))) == 4

    out = tmp_path / "tables"
    report = subprocess.run(
        [sys.executable, "-m", "reporting.report", "--runs", str(runs), "--out", str(out)],
        cwd=suite, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    row = next(line for line in (out / "table1.md").read_text().splitlines() if line.startswith("| toy"))
    assert "toy (accuracy; paper: —)" in row and "(n=2)" in row, row
