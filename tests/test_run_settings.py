"""Each setting that several parts of the suite read is decided once (tasks.run_settings)."""

from conftest import REPO
from hydra import compose, initialize_config_dir

from tasks.run_settings import effective_position, evaluate_overrides, run_dir_excludes, uses_encoder


def test_run_directory_names_leave_out_exactly_the_keys_that_do_not_change_a_result():
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", return_hydra_config=True)
    assert list(cfg.hydra.job.config.override_dirname.exclude_keys) == run_dir_excludes()


def test_effective_position_and_encoder_use_on_configs_and_records():
    assert effective_position({"elmo": {"position": "paper"}, "task": {"elmo_position": "both"}}) == "both"
    assert effective_position({"elmo": {"position": "input"}, "task": {"elmo_position": "both"}}) == "input"
    assert not uses_encoder({"elmo": {"position": "none"}, "task": {"name": "ner"}})
    assert uses_encoder({"elmo": {"position": "none"}, "task": {"name": "ner"}, "mode": "finetune"})
    assert uses_encoder({"elmo": {"position": "paper"}, "task": {"name": "probe_pos", "elmo_position": "probe"}})
    assert evaluate_overrides()[0] == "data." and "encoder.weights" in evaluate_overrides()
