"""Each trainable task on a tiny data set, set up as the runner does (``TASKS``: task -> its data directory and
the overrides that keep it small; ``task_setup``: configuration, task, encoder and the splits with their layers;
``new_model``), for the tests of every package. The tasks are the registry's: the six of the paper read their
fixtures under ``tests/fixtures``; any other task reads the ``sample/`` its folder holds (its own file names)."""

from conftest import FIXTURES, REPO
from hydra import compose, initialize_config_dir

from encoders import encoder_for
from experiments import runner
from experiments.run_config import as_run
from experiments.trainer import set_seed
from tasks.registry import available, is_probe_function

FIXTURE_FILES = {  # the paper's tasks: a fixture file under tests/fixtures, as train and dev, and what keeps it tiny
    "ner": ("ner_tiny.conll", []),
    "sst": ("sst_tiny.txt", []),
    "srl": ("srl_tiny.conllu", []),
    "nli": ("sick_tiny.tsv", ["data.format=sick"]),
    "qa": ("squad_tiny.json", ["task.max_tokens_per_batch=100000"]),
    "coref": (
        "coref_tiny.conll",
        [
            "task.model.hidden=8",
            "task.model.ffnn_size=8",
            "task.model.char_filters=4",
            "task.model.feature_size=4",
            "task.max_training_sentences=2",
        ],
    ),
}


def tiny_data(name: str) -> list[str] | None:
    """The overrides that point task ``name`` at its tiny data, or None where it has none."""
    if name in FIXTURE_FILES:
        fixture, extra = FIXTURE_FILES[name]
        return [f"data.dir={FIXTURES}", f"data.train_file={fixture}", f"data.dev_file={fixture}", *extra]
    sample = REPO / "tasks" / name / "sample"
    return [f"data.dir={sample}"] if sample.is_dir() else None


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
