"""Composed configurations the tests share: the full default (``compose_cfg``) and tiny NER and QA runs
on the fixtures with a given biLM (``tiny_ner_cfg``, ``tiny_qa_cfg``)."""

from conftest import REPO, SAMPLES

from experiments import config_store
from experiments.config_store import compose

CONF = str(config_store.CONF)


def compose_cfg(overrides=()):
    return compose(overrides)


def tiny_ner_cfg(bilm_files, tmp_path, *overrides):
    o, w = bilm_files
    return compose_cfg(
        [
            "task=ner",
            f"data.dir={SAMPLES['ner']}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "trainer.max_epochs=2",
            "trainer.min_updates=0",
            "task.model.hidden=[8]",
            "task.model.char_filters=4",
            "task.model.word_dim=8",
            "trainer.batch_size=8",
            *overrides,
        ]
    )


def tiny_qa_cfg(bilm_files, tmp_path, *overrides):
    o, w = bilm_files
    return compose_cfg(
        [
            "task=qa",
            f"data.dir={SAMPLES['qa']}",
            "data.train_file=squad_tiny.json",
            "data.dev_file=squad_tiny.json",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "task.model.hidden=6",
            "task.model.linear=8",
            "task.model.char_filters=4",
            "task.model.word_dim=8",
            *overrides,
        ]
    )


def tiny_ner_run_cfg(bilm, tmp_path, data_dir=SAMPLES["ner"], *overrides):
    o, w = bilm
    return compose_cfg(
        [
            "task=ner",
            f"data.dir={data_dir}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            f"runs_root={tmp_path / 'runs'}",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
            "task.model.hidden=[8]",
            "task.model.char_filters=4",
            "task.model.word_dim=8",
            "trainer.batch_size=8",
            *overrides,
        ]
    )


def run_tiny_ner(tmp_path, *overrides, timeout=300):
    """``python run.py task=ner`` on the tiny fixture in a new interpreter, runs and cache under ``tmp_path``."""
    import subprocess
    import sys

    return subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "task=ner",
            f"data.dir={SAMPLES['ner']}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            f"runs_root={tmp_path / 'runs'}",
            f"cache.dir={tmp_path / 'cache'}",
            *overrides,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=timeout,
    )


def stopping_in_epoch_two(predict):
    """``predict`` (the trainer's) that raises ``KeyboardInterrupt`` on its second call, the dev pass of epoch 2:
    as a run killed then, whose training state holds epoch 1."""
    calls = []

    def stop_in_epoch_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return predict(*args, **kwargs)

    return stop_in_epoch_two
