"""The configuration tree composes for every task, profile, position, mix and sweep, and the profiles
set the paper's values."""

from pathlib import Path

import pytest
from hydra import initialize_config_dir
from run_configs import CONF, compose_cfg

from experiments.paper_numbers import TASKS
from experiments.run_config import as_run
from tasks.common.layers import ElmoFeatures
from tasks.registry import available


@pytest.mark.every_task
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("profile", ["quick", "paper"])
@pytest.mark.parametrize("position", ["none", "input", "output", "both"])
@pytest.mark.parametrize("mix", ["all", "last", "average"])
def test_config_composes(task, profile, position, mix):
    cfg = compose_cfg([f"task={task}", f"profile={profile}", f"elmo.position={position}", f"elmo.mix={mix}"])
    assert cfg.task.name == task and cfg.elmo.position == position and cfg.elmo.mix == mix
    assert cfg.data.train_file and cfg.trainer.lr > 0
    features = ElmoFeatures(
        cfg.elmo.position, 3, 16, mix=cfg.elmo.mix, dropout=cfg.elmo.dropout, layer_norm=False, l2=0.0
    )
    assert features.input_dim == (16 if position in ("input", "both") else 0)
    assert features.output_dim == (16 if position in ("output", "both") else 0)


@pytest.mark.every_task
@pytest.mark.parametrize("task", available())
def test_source_local_points_every_task_at_its_shared_data(task):
    from conftest import SHARED

    from experiments.paper_numbers import REFERENCES

    local = compose_cfg([f"task={task}", "source=local"])
    assert Path(local.data.dir).parent.name == "data"  # a folder of ../shared/data (ELMO_SHARED)
    if SHARED.exists() and task in REFERENCES:  # the paper's tasks: their files are there
        assert (Path(local.data.dir) / local.data.get("train_file", "hard.pos")).exists()
    assert compose_cfg([f"task={task}"]).data.get("dir") is None  # source=hf (default): the Hugging Face dataset


def test_profiles_set_the_papers_task_values():
    ner = compose_cfg(["task=ner", "profile=paper"])
    assert list(ner.task.model.hidden) == [200, 100] and ner.elmo.l2 == 0.1 and as_run(ner).position == "input"
    sst = compose_cfg(["task=sst", "profile=paper"])
    assert sst.trainer.lr == 0.0001 and as_run(sst).position == "both" and sst.task.phrases_min_tokens == 4
    # the command line still wins over the profile
    assert as_run(compose_cfg(["task=ner", "profile=paper", "elmo.position=both"])).position == "both"


@pytest.mark.every_task
@pytest.mark.parametrize("sweep", ["table1", "table2", "table3", "sample_efficiency"])
def test_sweep_configs_compose(sweep):
    from hydra import compose as hcompose

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = hcompose("config", overrides=[f"+sweep={sweep}"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    assert "seed" in params and "+ablation" in params
    for task in params["task"].split(","):
        for ablation in params["+ablation"].split(","):
            c = compose_cfg([f"task={task}", f"+ablation={ablation}"])
            assert as_run(c).position in ("none", "input", "output", "both")


@pytest.mark.parametrize(
    "text, said",
    [
        ("data:\n  train_file: [unclosed\n", r"sst\.yaml:3: cannot be read as YAML"),
        ("- 1\n", r"sst\.yaml: must be a mapping"),
        ("profiles: 3\n", r"sst\.yaml: profiles must be a mapping of settings"),
    ],
)
def test_a_task_file_that_cannot_be_read_is_one_line_naming_it(tmp_path, text, said):
    import shutil

    from experiments.config_store import CONF, register
    from suite_common.errors import ConfigError

    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "task" / "sst.yaml").write_text(text)
    try:
        with pytest.raises(ConfigError, match=said):
            register(conf)
    finally:
        register()  # the store holds the real task files again


def test_a_new_task_file_without_its_folder_yet_is_checked_too(tmp_path):
    import shutil
    import subprocess
    import sys

    from conftest import REPO

    from experiments.config_store import CONF, register
    from suite_common.errors import ConfigError

    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "task" / "zzz.yaml").write_text("name: zzz\n  bad: [\n")
    try:
        with pytest.raises(ConfigError, match=r"zzz\.yaml:2: cannot be read as YAML"):
            register(conf)
    finally:
        register()
    copy = tmp_path / "suite"  # the entry point, as a user meets it: one line, no traceback
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".venv*", ".git", "outputs", ".cache", "results"))
    (copy / "conf" / "task" / "zzz.yaml").write_text("name: zzz\n  bad: [\n")
    done = subprocess.run([sys.executable, "run.py", "task=zzz"], cwd=copy, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"error: {copy}/conf/task/zzz.yaml:2: cannot be read as YAML "
                                                "(mapping values are not allowed here)"]  # fmt: skip


def test_compositions_share_the_config_store_and_never_write_to_it():
    """Hydra's per-composition copy of its repository shares the store (``experiments.config_store``): a node
    taken from the store and changed is a copy, and the next composition reads the registered node."""
    import copy

    from hydra.core.config_store import ConfigStore

    first = compose_cfg(["task=ner", "profile=paper"])
    store = ConfigStore.instance()
    assert copy.deepcopy(store) is store
    loaded = store.load("task_defaults/ner.yaml").node
    loaded.name = "changed"
    assert store.load("task_defaults/ner.yaml").node.name == "ner"
    assert compose_cfg(["task=ner", "profile=paper"]) == first
