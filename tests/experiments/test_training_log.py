"""Live training curves: a default run writes a TensorBoard event file into its run directory, read back
here with TensorBoard's own reader; ``logger=none`` writes none; the logs are no part of the identity."""

import pytest
from run_configs import tiny_ner_cfg

from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import ConfigError


def _cfg(bilm_files, tmp_path, *overrides):
    return tiny_ner_cfg(bilm_files, tmp_path, f"runs_root={tmp_path}", *overrides)


def test_a_default_run_writes_curves_that_tensorboard_reads_back(bilm_files, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    out.mkdir()
    result = runner.train(as_run(_cfg(bilm_files, tmp_path)), out)
    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"epoch/train_loss", "epoch/dev_f1", "update/lr", "update/grad_norm"} <= tags
    dev = [e.value for e in events.Scalars("epoch/dev_f1")]
    assert dev == pytest.approx([row["dev_f1"] for row in result["epochs"]], abs=1e-4)  # what the record holds
    updates = events.Scalars("update/lr")
    assert [e.step for e in updates] == list(range(1, len(updates) + 1)) and len(updates) >= 2
    weights = sorted(t for t in tags if t.startswith("mix/") and "/s" in t)
    assert len(weights) == 3  # the input mix's s_0, s_1, s_2 (softmax-normalized), and its gamma
    last = [events.Scalars(t)[-1].value for t in weights]
    assert sum(last) == pytest.approx(1.0, abs=1e-5)


def test_logger_none_writes_no_log_and_the_logger_is_not_part_of_the_identity(bilm_files, tmp_path):
    from experiments.plan import RunPlan

    quiet, loud = as_run(_cfg(bilm_files, tmp_path, "logger=none")), as_run(_cfg(bilm_files, tmp_path))
    assert RunPlan.resolve(quiet).digest == RunPlan.resolve(loud).digest
    out = tmp_path / "run"
    out.mkdir()
    runner.train(quiet, out)
    assert not (out / "tensorboard").exists()


def test_a_logger_whose_library_is_missing_is_one_line(monkeypatch, tmp_path):
    import builtins

    from experiments.training_log import open_training_log

    real = builtins.__import__

    def no_wandb(name, *args, **kwargs):
        if name == "wandb":
            raise ImportError("No module named 'wandb'", name="wandb")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_wandb)
    with pytest.raises(ConfigError, match=r"logger=wandb: wandb is not installed \(pip install wandb\)"):
        open_training_log("wandb", tmp_path)
