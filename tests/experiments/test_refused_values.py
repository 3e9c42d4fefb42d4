"""Values a run cannot use are refused before anything runs (the dry run included), each in one
line naming the key: a learning rate (or any float setting) that is not finite, a seed beyond
numpy's range, more threads than OpenMP can start; a loss that becomes NaN stops the run without a
record."""

import math

import pytest
from run_configs import compose_cfg, tiny_ner_cfg

from experiments import runner
from experiments.dry_run import dry_run
from experiments.run_config import SEED_MAX, as_run
from experiments.threads import THREADS_MAX
from experiments.trainer import TrainingDiverged
from suite_common.errors import ConfigError


@pytest.mark.parametrize(
    "override, message",
    [
        ("trainer.lr=inf", r"trainer.lr=inf: must be a finite number"),
        ("trainer.lr=nan", r"trainer.lr=nan: must be a finite number"),
        ("task.model.dropout=-inf", r"task.model.dropout=-inf: must be a finite number"),
        ("elmo.l2=inf", r"elmo.l2=inf: must be a finite number"),
        (f"seed={SEED_MAX + 1}", rf"seed={SEED_MAX + 1}: must be less than or equal to {SEED_MAX}"),
        ("seed=99999999999999999999", r"seed=99999999999999999999: must be less than or equal to"),
        (f"threads={THREADS_MAX + 1}", rf"threads={THREADS_MAX + 1}: must be auto or a whole number from 1 to"),
        ("threads=100000", r"threads=100000: must be auto or a whole number from 1 to"),
    ],
)
def test_values_a_run_cannot_use_are_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        as_run(compose_cfg(["task=ner", override]))


def test_the_dry_run_refuses_them_too(bilm_files, tmp_path):
    with pytest.raises(ConfigError, match="seed="):
        dry_run(
            as_run(tiny_ner_cfg(bilm_files, tmp_path, "seed=99999999999999999999", f"runs_root={tmp_path / 'runs'}"))
        )
    assert not (tmp_path / "runs").exists()


def test_a_loss_that_becomes_nan_stops_the_run_without_a_record(bilm_files, tmp_path, monkeypatch):
    from experiments import trainer

    monkeypatch.setattr(trainer, "train_step", lambda *a, **k: math.nan)
    out = tmp_path / "runs" / "ner" / "x"
    out.mkdir(parents=True)
    cfg = tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input", f"runs_root={tmp_path / 'runs'}")
    with pytest.raises(TrainingDiverged, match=r"the training loss is nan at epoch 1, batch 1: training diverged"):
        runner.train(as_run(cfg), out)
    assert not (out / "results.json").exists() and not (out / "best.pt").exists()
