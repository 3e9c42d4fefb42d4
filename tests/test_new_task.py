"""A new task is one folder and its config file: a toy seventh task, added with nothing else changed, trains
through ``run.py``, is reported by ``reporting.report``, and passes every test of the suite that goes through
every registered task (``every_task``)."""

import os
import random
import re
import shutil
import subprocess
import sys

from conftest import FIXTURES, REPO, SHARED

TOY = FIXTURES / "toy_task"
CODE = [
    "run.py",
    "conf",
    "elmo_core",
    "bert_core",
    "static_vectors",
    "encoders",
    "tasks",
    "experiments",
    "reporting",
    "suite_common",
]


def copy_of_the_suite(root, names=CODE):
    root.mkdir()
    for name in names:
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
    assert {p.parts[:2] for p in added} == {("tasks", "toy"), ("conf", "task")} and len(added) == 9
    assert all((suite / p).read_bytes() == (REPO / p).read_bytes() for p in before)  # nothing else changed

    data = tmp_path / "shared" / "data" / "toy"
    lines = polarity_data(data, 48, 0)
    (data / "train.tsv").write_text("".join(lines[:32]))
    (data / "dev.tsv").write_text("".join(lines[32:]))
    env = {**os.environ, "ELMO_SHARED": str(tmp_path / "shared"), "HF_HUB_OFFLINE": "1"}
    compose = "from experiments.config_store import compose; print(compose(['+sweep=table1'], hydra_config=True)"
    sweep = subprocess.run([sys.executable, "-c", f"{compose}.hydra.sweeper.params.task)"], cwd=suite, env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert "toy" in sweep.stdout.strip().split(","), sweep.stderr[-2000:]  # Table 1's sweep runs it, no edit made
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
    lines = (out / "table1.md").read_text().splitlines()
    row = next(line for line in lines if line.startswith("| toy (accuracy) "))  # the table a terminal shows
    assert "(n=2)" in row and any(line.startswith("| toy (accuracy; paper: —)") for line in lines), row


def test_the_toy_task_in_the_checkout_passes_every_test_that_goes_through_every_task(tmp_path):
    """The suite's own tests, with the toy's folder and its config file placed beside the six tasks: each
    ``every_task`` test runs for the toy (``ELMO_ONLY_TASK``: the other tasks' cases are the main run's)."""
    suite = tmp_path / "suite"
    copy_of_the_suite(suite, [*CODE, "tests", "pyproject.toml"])
    shutil.copytree(TOY / "tasks" / "toy", suite / "tasks" / "toy")
    shutil.copy2(TOY / "conf" / "task" / "toy.yaml", suite / "conf" / "task" / "toy.yaml")
    env = {**os.environ, "ELMO_ONLY_TASK": "toy", "ELMO_SHARED": str(SHARED), "HF_HUB_OFFLINE": "1"}
    marked = sorted(
        str(p.relative_to(suite)) for p in (suite / "tests").rglob("test_*.py") if "every_task" in p.read_text()
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-m", "every_task", "-p", "no:cacheprovider",
         f"--basetemp={tmp_path / 'tmp'}", *marked],
        cwd=suite, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    toy_cases = set(re.findall(r"::(\w+)\[[^\]]*toy[^\]]*\] PASSED", done.stdout))
    parametrized = {
        "test_trains_saves_reloads_and_predicts_the_same",
        "test_prediction_does_not_depend_on_batch_or_padding",
        "test_every_model_returns_one_output_type",
        "test_task_head_forward_loss_and_backward_on_meta",
        "test_every_task_trains_on_a_tiny_random_bert",
        "test_config_composes",
        "test_source_local_points_every_task_at_its_shared_data",
        "test_every_count_a_reader_reports_is_explained",
    }
    assert parametrized <= toy_cases, sorted(parametrized - toy_cases)
    assert not re.search(r"\[[^\]]*\b(ner|sst|srl|qa|nli|coref)\b[^\]]*\] PASSED", done.stdout)
