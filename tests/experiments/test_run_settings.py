"""Each setting that several parts of the suite read is decided once (experiments.run_config)."""

import pytest
from conftest import REPO
from hydra import compose, initialize_config_dir

from experiments.record import Record
from experiments.run_config import as_run, evaluate_overrides, placement, reads_layers, run_dir_excludes
from tasks.registry import available


def test_run_directory_names_leave_out_exactly_the_keys_that_do_not_change_a_result():
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", return_hydra_config=True)
    assert list(cfg.hydra.job.config.override_dirname.exclude_keys) == run_dir_excludes()


def test_effective_position_and_encoder_use_on_configs_and_records():
    assert (placement("paper", "both"), placement("input", "both")) == ("both", "input")
    assert not reads_layers("ner", "train", "none") and reads_layers("ner", "finetune", "none")
    assert reads_layers("probe_pos", "train", "probe")
    assert not Record(config={"elmo": {"position": "none"}, "task": {"name": "ner"}}, task="ner").uses_encoder
    paper = {"elmo": {"position": "paper"}, "task": {"name": "sst", "elmo_position": "both"}}
    assert Record(config=paper, task="sst").uses_encoder
    assert evaluate_overrides()[0] == "data." and "encoder.weights" in evaluate_overrides()


def test_a_runs_elmo_settings_are_read_once_into_one_typed_value():
    elmo = {"position": "paper", "mix": "last", "dropout": 0.1, "layer_norm": True, "l2": 0.0}
    run = as_run({"elmo": elmo, "task": {"name": "srl", "elmo_position": "input"}})
    assert (run.position, run.reads_encoder) == ("input", True)
    assert (run.elmo.mix, run.elmo.dropout, run.elmo.layer_norm, run.elmo.l2) == ("last", 0.1, True, 0.0)
    baseline = as_run({"elmo": {**elmo, "position": "none"}, "task": {"name": "srl"}})
    assert baseline.position == "none" and not baseline.reads_encoder


def _leaf_keys(node, prefix=""):
    for key, value in node.items():
        if isinstance(value, dict) and value:
            yield from _leaf_keys(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


@pytest.mark.every_task
def test_every_composed_configuration_is_a_typed_plan_and_every_field_is_configured_somewhere():
    """A new key in conf/ needs its typed field (which declares its part in the identity beside it): a
    configuration with a key no field declares does not build; a field that no configuration holds is
    a default nobody can see."""
    import dataclasses
    import itertools

    from omegaconf import OmegaConf

    def fields_of(obj, prefix=""):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                yield from fields_of(value, f"{prefix}{f.name}.")
            else:
                yield f"{prefix}{f.name}"

    seen, declared = set(), set()
    tasks = available()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        for task, profile, source, encoder in itertools.product(
            tasks, ("quick", "paper"), ("local", "hf"), ("bilm", "transformer")
        ):
            overrides = [f"task={task}", f"profile={profile}", f"source={source}", f"encoder={encoder}"]
            plain = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
            seen |= set(_leaf_keys(plain))
            declared |= set(fields_of(as_run(plain)))
    held = seen | {k.rsplit(".", 1)[0] for k in seen}  # a mapping-valued field (data.hf_split) by its entries
    never_configured = sorted(declared - held - {"source", "data.hf_config"})  # source: an empty group
    assert never_configured == [], f"typed fields no configuration in conf/ holds: {never_configured}"
