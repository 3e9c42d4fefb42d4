"""A run longer than one machine's life: its training state is committed (``git add -f``), and on a fresh
clone its directory holds that file alone; the same command resumes it there (``experiments/train_state.py``)."""

import contextlib
import io
import json
import runpy
import sys

import numpy as np
import torch
from conftest import REPO, SAMPLES
from hydra.core.global_hydra import GlobalHydra
from run_configs import stopping_in_epoch_two

from static_vectors.store import write_hdf5


def run_py(overrides: list[str]) -> int:
    """``python run.py OVERRIDES`` in this process; its exit status (0 when it returns)."""
    threads, argv = torch.get_num_threads(), sys.argv
    GlobalHydra.instance().clear()
    sys.argv = [str(REPO / "run.py"), *overrides]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(REPO / "run.py"), run_name="__main__")
        return 0
    except SystemExit as e:
        return int(e.code or 0)
    finally:
        sys.argv = argv
        GlobalHydra.instance().clear()
        torch.set_num_threads(threads)


def test_a_run_whose_directory_holds_only_its_committed_state_resumes_with_the_same_numbers(
    bilm_files, tmp_path, monkeypatch
):
    from experiments import trainer

    options, weights = bilm_files
    vectors = tmp_path / "vectors_8d.hdf5"
    write_hdf5(vectors, ["EU", "German", "the"], np.arange(24, dtype=np.float32).reshape(3, 8) / 24)
    job = [
        "task=ner",
        "+ablation=baseline",
        f"data.dir={SAMPLES['ner']}",
        "data.train_file=ner_tiny.conll",
        "data.dev_file=ner_tiny.conll",
        f"encoder.options={options}",
        f"encoder.weights={weights}",
        f"cache.dir={tmp_path / 'cache'}",
        "task.model.hidden=[8]",
        "task.model.char_filters=4",
        "task.model.word_dim=8",
        f"task.model.vectors={vectors}",
        "task.model.freeze_vectors=true",
        "trainer.max_epochs=3",
        "trainer.patience=3",
        "trainer.min_updates=0",
        "trainer.batch_size=8",
        "threads=1",
    ]
    assert run_py([*job, f"runs_root={tmp_path / 'whole'}"]) == 0
    (whole,) = (tmp_path / "whole").glob("ner/*/results.json")

    real_predict = trainer.predict
    monkeypatch.setattr(trainer, "predict", stopping_in_epoch_two(real_predict))
    assert run_py([*job, f"runs_root={tmp_path / 'stopped'}"]) == 130
    (state,) = (tmp_path / "stopped").glob("ner/*/train_state.pt")
    for other in state.parent.rglob("*"):  # what a clone of the runs root has: the committed state alone
        if other.is_file() and other != state:
            other.unlink()
    monkeypatch.setattr(trainer, "predict", real_predict)
    assert run_py([*job, f"runs_root={tmp_path / 'stopped'}"]) == 0
    resumed = json.loads((state.parent / "results.json").read_text())
    uninterrupted = json.loads(whole.read_text())
    assert resumed["resumed_from_epoch"] == 1 and not state.exists()
    assert resumed["dev"] == uninterrupted["dev"]
    assert [e["train_loss"] for e in resumed["epochs"]] == [e["train_loss"] for e in uninterrupted["epochs"]]
