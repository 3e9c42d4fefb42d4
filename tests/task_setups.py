"""Each task on its tiny fixture, set up as the runner does (``TASKS``: fixture and sizes; ``task_setup``:
configuration, task, encoder and the splits with their layers; ``new_model``), for the tests of every package."""

from conftest import FIXTURES, REPO
from hydra import compose, initialize_config_dir

from encoders import encoder_for
from experiments import runner
from experiments.run_config import as_run
from experiments.trainer import set_seed

TASKS = {
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


def task_setup(task_name, bilm_files, tmp_path, more_overrides=()):
    fixture, extra = TASKS[task_name]
    o, w = bilm_files
    overrides = [
        f"task={task_name}",
        f"data.dir={FIXTURES}",
        f"data.train_file={fixture}",
        f"data.dev_file={fixture}",
        f"encoder.options={o}",
        f"encoder.weights={w}",
        f"cache.dir={tmp_path / 'cache'}",
        "elmo.position=both",
        "elmo.dropout=0.0",
        "task.model.word_dim=8",
        "task.model.dropout=0.0",
        *extra,
        *more_overrides,
    ]
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    task = runner.make_task(cfg)
    splits = runner.training_splits(cfg, task)
    task.build_vocab(splits["train"])
    source = encoder_for(as_run(cfg))
    data = runner.with_layers(as_run(cfg), task, splits, source)
    return cfg, task, source, data


def new_model(cfg, task, source):
    set_seed(0)
    return task.build_model(runner.build_features(as_run(cfg), source))
