"""``make clean`` on a used checkout leaves ``git status --ignored`` clean, apart from what was trained or
reported (task runs and tables under ``outputs/``, pretrained models in ``runs/``, ``checkpoints/``), which
only ``make delete-trained-runs`` removes (the task runs)."""

import os
import pwd
import subprocess

from conftest import REPO

LEFTOVERS = [
    ".venv/bin/python",
    ".venv-latest/x",
    "outputs/runs/ner/_/results.json",
    "outputs/tables/table1.md",
    "outputs/embed_sample/embeddings.hdf5",
    "multirun/x",
    ".cache/activations/k/layers.npy",
    ".cache/finetuned/x",
    ".pytest_cache/v",
    ".ruff_cache/x",
    "elmo_suite.egg-info/PKG-INFO",
    "tasks/__pycache__/runner.cpython-311.pyc",
    "runs/small/weights.hdf5",
    "checkpoints/bert-small/model/config.json",
]


def test_make_clean_leaves_only_what_it_documents(tmp_path):
    """A git repository holding the Makefile and .gitignore of this working tree (all that ``make clean`` and
    ``git status --ignored`` read), used as a checkout is used, then cleaned."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", ".gitignore"):
        (clone / name).write_text((REPO / name).read_text())
    author = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for command in (["git", "init", "--quiet"], ["git", "add", "-A"], ["git", "commit", "--quiet", "-m", "checkout"]):
        subprocess.run(command, cwd=clone, check=True, timeout=60, env={**os.environ, **author})
    for leftover in LEFTOVERS:
        (clone / leftover).parent.mkdir(parents=True, exist_ok=True)
        (clone / leftover).write_text("x")
    temporary = tmp_path / "tmp"
    user = pwd.getpwuid(os.getuid()).pw_name
    others = temporary / f"pytest-of-{user}" / "another-project"  # not this checkout's: kept
    others.mkdir(parents=True)
    printed = subprocess.run(
        ["make", "-s", "--eval", "print-tmp:\n\t@echo $(PYTEST_TMP)", "print-tmp"],
        cwd=clone,
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    ours = printed.stdout.strip()
    assert ours.startswith(str(temporary / f"elmo-suite-pytest-{user}-"))
    (temporary / ours / "popen-gw0" / "x").mkdir(parents=True)
    done = subprocess.run(
        ["make", "clean"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stderr
    status = lambda: sorted(  # noqa: E731
        subprocess.run(
            ["git", "status", "--ignored", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    )
    assert status() == ["!! checkpoints/", "!! multirun/", "!! outputs/", "!! runs/"]
    assert sorted(p.relative_to(clone).as_posix() for p in (clone / "outputs").rglob("*") if p.is_file()) == [
        "outputs/runs/ner/_/results.json",
        "outputs/tables/table1.md",
    ]  # trained runs and their tables are never cleaned up
    removed = subprocess.run(["make", "delete-trained-runs"], cwd=clone, capture_output=True, text=True, timeout=60)
    assert removed.returncode == 0, removed.stderr
    assert status() == ["!! checkpoints/", "!! runs/"]
    assert [p.name for p in temporary.iterdir()] == [f"pytest-of-{user}"] and others.exists()
