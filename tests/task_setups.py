"""Each trainable task on a tiny data set, set up as the runner does (``TASKS``: task -> its data directory and
the overrides that keep it small; ``task_setup``: configuration, task, encoder and the splits with their layers;
``new_model``), for the tests of every package. The tasks are the registry's, each on the tiny sample its task
file declares (``sources.sample``, ``profiles.tiny``: what ``source=sample profile=tiny`` runs)."""

from conftest import REPO
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from encoders import encoder_for
from experiments import runner
from experiments.config_store import task_file
from experiments.run_config import as_run
from experiments.trainer import set_seed
from tasks.registry import available, is_probe_function


def overrides_of(node, where: str = "") -> list[str]:
    """A mapping as Hydra overrides (``task.model.hidden=[8]``)."""
    if isinstance(node, dict):
        return [o for k, v in node.items() for o in overrides_of(v, f"{where}{k}.")]
    if isinstance(node, list):
        return [f"{where.rstrip('.')}=[{','.join(map(str, node))}]"]
    return [f"{where.rstrip('.')}={str(node).lower() if isinstance(node, bool) else node}"]


def tiny_sizes(name: str) -> list[str]:
    """The task file's ``profiles.tiny`` (a model a few units wide), as overrides."""
    tiny = task_file(name).profiles.get("tiny")
    return overrides_of(OmegaConf.to_container(tiny)) if tiny else []


def tiny_data(name: str, sizes: bool = True) -> list[str] | None:
    """Task ``name`` on its tiny sample, as overrides: its task file's ``sources.sample`` (the directory taken
    from the checkout) and, with ``sizes``, ``tiny_sizes``; None where it declares no sample."""
    sample = task_file(name).sources.get("sample")
    if sample is None:
        return None
    data = overrides_of({"data": {**OmegaConf.to_container(sample), "dir": str(REPO / sample.dir)}})
    return data + (tiny_sizes(name) if sizes else [])


TRAINABLE = [name for name in available() if not is_probe_function(name) and not name.startswith("probe_")]
TASKS = {name: data for name in TRAINABLE if (data := tiny_data(name)) is not None}


def task_setup(task_name, bilm_files, tmp_path, more_overrides=()):
    o, w = bilm_files
    overrides = [
        f"task={task_name}",
        *TASKS[task_name],
        f"encoder.options={o}",
        f"encoder.weights={w}",
        f"cache.dir={tmp_path / 'cache'}",
        "elmo.position=both",
        "elmo.dropout=0.0",
        "task.model.word_dim=8",
        "task.model.dropout=0.0",
        *more_overrides,
    ]
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    task = runner.make_task(as_run(cfg))
    splits = runner.training_splits(as_run(cfg), task)
    task.build_vocab(splits["train"])
    source = encoder_for(as_run(cfg))
    data = runner.with_layers(as_run(cfg), task, splits, source)
    return cfg, task, source, data


def new_model(cfg, task, source):
    set_seed(0)
    return task.build_model(runner.build_features(as_run(cfg), source))
