"""Each task end to end through the runner on its fixture: SST (binary too), SRL's shared biLM rows,
QA, NLI, unknown data formats, QA subsampling."""

import json

import pytest
from conftest import SAMPLES
from run_configs import compose_cfg, tiny_qa_cfg
from task_setups import TRAINABLE

from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import ConfigError
from tasks.registry import task_class


def test_sst_end_to_end_and_binary(bilm_files, tmp_path):
    o, w = bilm_files
    for binary in ("false", "true"):
        out = tmp_path / f"sst-{binary}"
        out.mkdir()
        cfg = compose_cfg(
            [
                "task=sst",
                f"data.dir={SAMPLES['sst']}",
                "data.train_file=sst_tiny.txt",
                "data.dev_file=sst_tiny.txt",
                f"encoder.options={o}",
                f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}",
                "elmo.position=output",
                f"task.binary={binary}",
                "trainer.max_epochs=3",
                "trainer.min_updates=0",
                "task.model.hidden=8",
                "task.model.feedforward=8",
                "task.model.char_filters=4",
                "task.model.word_dim=8",
            ]
        )
        r = runner.train(as_run(cfg), out)
        assert 0 <= r["dev"]["accuracy"] <= 100 and set(r["mixing_weights"]) == {"output"}
        assert r["data_stats"]["train"]["neutral_dropped"] == (3 if binary == "true" else 0)


def test_srl_end_to_end_shares_biLM_rows(bilm_files, tmp_path):
    o, w = bilm_files
    out = tmp_path / "srl"
    out.mkdir()
    cfg = compose_cfg(
        [
            "task=srl",
            f"data.dir={SAMPLES['srl']}",
            "data.train_file=srl_tiny.conllu",
            "data.dev_file=srl_tiny.conllu",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "elmo.position=both",
            "trainer.max_epochs=2",
            "trainer.min_updates=0",
            "task.model.hidden=8",
            "task.model.layers=2",
            "task.model.word_dim=8",
            "task.model.predicate_dim=4",
        ]
    )
    r = runner.train(as_run(cfg), out)
    assert 0 <= r["dev"]["f1"] <= 100 and "per_role" in r["dev"]
    cached = [p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]
    assert len(cached) == 1  # train and dev are the same file: one entry
    meta = __import__("json").loads((cached[0] / "meta.json").read_text())
    assert meta["sentences"] == 2  # 3 predicates in 2 annotated sentences with predicates: one biLM row each


def test_qa_end_to_end(bilm_files, tmp_path):
    out = tmp_path / "qa"
    out.mkdir()
    cfg = tiny_qa_cfg(
        bilm_files,
        tmp_path,
        "elmo.position=both",
        "trainer.max_epochs=2",
        "trainer.min_updates=0",
        "trainer.batch_size=2",
        "data.fraction=1.0",
    )  # the quick profile trains QA on 10 %
    r = runner.train(as_run(cfg), out)
    assert r["dev"]["questions"] == 4 and 0 <= r["dev"]["f1"] <= 100
    meta = json.loads(
        next(p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")).joinpath("meta.json").read_text()
    )
    assert meta["sentences"] == 2 + 4  # each context once, each question once


def test_nli_end_to_end_deterministic(bilm_files, tmp_path):
    o, w = bilm_files
    results = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        cfg = compose_cfg(
            [
                "task=nli",
                "data.format=sick",
                f"data.dir={SAMPLES['nli']}",
                "data.train_file=sick_tiny.tsv",
                "data.dev_file=sick_tiny.tsv",
                f"encoder.options={o}",
                f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}",
                "elmo.position=both",
                "elmo.layer_norm=true",
                "trainer.max_epochs=2",
                "trainer.min_updates=0",
                "task.model.hidden=6",
                "task.model.word_dim=8",
            ]
        )
        results.append(runner.train(as_run(cfg), out))
    assert (
        results[0]["dev"] == results[1]["dev"]
        and results[0]["epochs"][0]["train_loss"] == results[1]["epochs"][0]["train_loss"]
    )
    assert set(results[0]["dev"]["per_class_accuracy"]) == {"entailment", "neutral", "contradiction"}
    meta = json.loads(
        next(p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")).joinpath("meta.json").read_text()
    )
    assert meta["sentences"] == 9  # 3 premises + 6 hypotheses, each read once


@pytest.mark.every_task
@pytest.mark.parametrize("task", [name for name in TRAINABLE if len(task_class(name).readers) > 1])
def test_unknown_data_format_is_a_clear_error(task, bilm_files, tmp_path):
    o, w = bilm_files
    cfg = compose_cfg(
        [f"task={task}", f"data.dir={SAMPLES[task]}", "data.format=xml", f"encoder.options={o}", f"encoder.weights={w}"]
    )
    with pytest.raises(ConfigError, match="data.format must be one of .* got 'xml'"):
        runner.train(as_run(cfg), tmp_path)


def test_qa_subsample_keeps_context_rows_dense(bilm_files, tmp_path):
    out = tmp_path / "qa"
    out.mkdir()
    r = runner.train(
        as_run(
            tiny_qa_cfg(
                bilm_files,
                tmp_path,
                "elmo.position=input",
                "trainer.max_epochs=1",
                "trainer.min_updates=0",
                "data.fraction=0.5",
            )
        ),
        out,
    )
    assert r["train_examples"] == 2 and r["dev"]["questions"] == 4
