"""Fault injection: a training run, an embed and an activation-cache build are killed (SIGKILL) at
several points. Nothing partial is ever read as complete, a rerun finishes with the result of an
uninterrupted run, and nothing is left behind."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import REPO, SAMPLES, random_bilm

from elmo_core import save_bilm

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def _sentences() -> list[list[tuple[str, str]]]:
    """The NER fixture's sentences, as (token, tag) pairs."""
    out, current = [], []
    for line in (SAMPLES["ner"] / "ner_tiny.conll").read_text().splitlines():
        if not line.strip() or line.startswith("-DOCSTART-"):
            if current:
                out.append(current)
            current = []
        else:
            cols = line.split()
            current.append((cols[0], cols[3]))
    return out + ([current] if current else [])


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    """A tiny biLM and enough NER text that each phase lasts long enough to be interrupted."""
    root = tmp_path_factory.mktemp("faults")
    save_bilm(random_bilm(), root / "options.json", root / "weights.hdf5")
    base = _sentences()
    lines = []
    for k in range(1500):  # distinct sentences: the cache and the embedding hold each one
        sentence = base[k % len(base)]
        lines += [f"{tok}{k if i == 0 else ''} NN O {tag}" for i, (tok, tag) in enumerate(sentence)] + [""]
    (root / "train.conll").write_text("\n".join(lines) + "\n")
    (root / "dev.conll").write_text((SAMPLES["ner"] / "ner_tiny.conll").read_text())
    (root / "text.txt").write_text(
        "\n".join(" ".join(t for t, _ in base[k % len(base)]) + f" x{k}" for k in range(3000)) + "\n"
    )
    return root


def _train_command(w: Path, state: Path) -> list[str]:
    return [
        sys.executable,
        str(REPO / "run.py"),
        "task=ner",
        f"data.dir={w}",
        "data.train_file=train.conll",
        "data.dev_file=dev.conll",
        f"encoder.options={w / 'options.json'}",
        f"encoder.weights={w / 'weights.hdf5'}",
        f"cache.dir={state / 'cache'}",
        f"runs_root={state / 'runs'}",
        "elmo.position=input",
        "trainer.max_epochs=2",
        "trainer.min_updates=0",
        "trainer.patience=2",
        "task.model.hidden=[8]",
        "task.model.char_filters=4",
        "task.model.word_dim=8",
        "trainer.batch_size=16",
    ]


def _run_and_kill(command: list[str], cwd: Path, ready) -> None:
    """Start ``command``; SIGKILL it as soon as ``ready(stderr so far)`` holds."""
    proc = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = bytearray()
    reader = threading.Thread(
        target=lambda: [err.extend(chunk) for chunk in iter(lambda: proc.stderr.read1(4096), b"")], daemon=True
    )
    reader.start()
    deadline = time.time() + 120
    while not ready(err.decode("utf-8", "replace")):
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"the process ended before the fault point was reached:\n{err.decode()[-2000:]}")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join(5)
    assert proc.returncode == -signal.SIGKILL


def _leftovers(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if ".tmp-" in p.name]


def _record(state: Path) -> dict:
    records = list((state / "runs").rglob("results.json"))
    assert len(records) == 1, records
    return json.loads(records[0].read_text())


def _temporary_in(directory: Path):
    return lambda _err: directory.exists() and any(".tmp-" in p.name for p in directory.iterdir())


@pytest.fixture(scope="module")
def uninterrupted(workload, tmp_path_factory) -> dict:
    reference = tmp_path_factory.mktemp("reference")
    done = subprocess.run(_train_command(workload, reference), cwd=reference, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return _record(reference)


@pytest.mark.parametrize("point", ["cache build", "epoch 1", "epoch 2"])
def test_killed_training_run_reruns_to_the_uninterrupted_result(workload, uninterrupted, tmp_path, point):
    expected = uninterrupted

    state = tmp_path / "interrupted"
    ready = _temporary_in(state / "cache") if point == "cache build" else (lambda err: f"{point}/2" in err)
    _run_and_kill(_train_command(workload, state), tmp_path, ready)
    assert not list((state / "runs").rglob("results.json")) and not list((state / "runs").rglob("best.pt"))
    if point == "cache build":  # no entry appeared complete
        assert not [p for p in (state / "cache").iterdir() if ".tmp-" not in p.name and p.name != ".locks"]

    done = subprocess.run(_train_command(workload, state), cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    again = _record(state)
    assert again["dev"] == expected["dev"] and again["mixing_weights"] == expected["mixing_weights"]
    assert again["config_hash"] == expected["config_hash"]
    assert not _leftovers(state / "cache", state / "runs")


def test_killed_embed_leaves_no_output_and_reruns_to_the_same_file(workload, tmp_path):
    command = [
        sys.executable,
        "-m",
        "elmo_core.embed",
        "--options",
        str(workload / "options.json"),
        "--weights",
        str(workload / "weights.hdf5"),
        "--input",
        str(workload / "text.txt"),
        "--batch-size",
        "16",
    ]
    subprocess.run(
        command + ["--output", str(tmp_path / "reference.hdf5")], cwd=REPO, env=ENV, check=True, capture_output=True
    )
    out = tmp_path / "out" / "layers.hdf5"
    out.parent.mkdir()
    _run_and_kill(command + ["--output", str(out)], REPO, _temporary_in(out.parent))
    assert not out.exists() and _leftovers(out.parent)  # the dead writer's temporary is there ...
    subprocess.run(command + ["--output", str(out)], cwd=REPO, env=ENV, check=True, capture_output=True)
    assert not _leftovers(out.parent)  # ... and the next writer removed it
    with h5py.File(tmp_path / "reference.hdf5") as a, h5py.File(out) as b:
        assert sorted(a) == sorted(b)
        for key in a:
            if key != "sentence_to_index":
                np.testing.assert_array_equal(a[key][...], b[key][...])
