"""encoder=transformer: a tiny random BERT (built from a config in a temporary directory; nothing is
downloaded) through every task's run, the activation cache keyed by the model, run identities that
keep encoders apart and leave biLM records as they were, evaluate, and clear errors."""

import json

import numpy as np
import pytest
from conftest import REPO, SAMPLES
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from task_setups import TASKS
from tiny_models import tiny_bert

from encoders import TransformerEncoder, encoder_for
from encoders.activation_cache import ActivationCache
from experiments import runner, trained_runs
from experiments.plan import run_digest
from experiments.run_config import as_run
from suite_common.errors import EncoderError


def _cfg(overrides):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def _task_overrides(task_name, tmp_path, model_dir, *extra):
    return [
        f"task={task_name}",
        *TASKS[task_name],
        "encoder=transformer",
        f"encoder.model={model_dir}",
        f"cache.dir={tmp_path / 'cache'}",
        "elmo.position=both",
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        "task.model.word_dim=8",
        *extra,
    ]


@pytest.mark.every_task
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_every_task_trains_on_a_tiny_random_bert(task_name, tmp_path):
    model_dir = tiny_bert(tmp_path / "bert", max_position=32)  # QA contexts and coref documents need windows
    cfg = _cfg(_task_overrides(task_name, tmp_path, model_dir))
    out = tmp_path / "run"
    out.mkdir()
    results = runner.train(as_run(cfg), out)
    record = json.loads((out / "results.json").read_text())
    assert "bilm" not in record and "bilm_sha256" not in record["identity"]  # a Transformer's record names no biLM
    assert record["transformer"]["kind"] == "transformer"
    assert record["transformer"]["sha256"] == encoder_for(as_run(cfg)).sha256 == record["identity"]["encoder_sha256"]
    weights = record["mixing_weights"]
    assert any(len(w["s"]) == 3 for w in weights.values())  # embeddings + 2 hidden layers, mixed like the biLM's
    assert np.isfinite(results["dev"][record["metric"]])


def test_cache_is_keyed_by_model_and_pooling(tmp_path):
    sentences = [["the", "unbelievable", "cat"], ["a", "dog", "sat", "on", "the", "mat", "."]]
    a, b = tiny_bert(tmp_path / "a", seed=0), tiny_bert(tmp_path / "b", seed=1)

    def cache(model_dir, pooling="first"):
        cfg = _cfg(
            [
                "encoder=transformer",
                f"encoder.model={model_dir}",
                f"encoder.pooling={pooling}",
                f"cache.dir={tmp_path / 'cache'}",
            ]
        )
        return encoder_for(as_run(cfg)).cache()

    before = ActivationCache.encoder_passes
    first = cache(a).get(sentences, "t")
    assert ActivationCache.encoder_passes == before + 1
    assert cache(a).get(sentences, "t").directory == first.directory
    assert ActivationCache.encoder_passes == before + 1  # same model, same text: read from the cache
    other = cache(b).get(sentences, "t")
    mean = cache(a, "mean").get(sentences, "t")
    assert len({first.directory, other.directory, mean.directory}) == 3
    assert not np.allclose(first.sentence(0), other.sentence(0))
    np.testing.assert_allclose(first.sentence(0)[:, [0, 2]], mean.sentence(0)[:, [0, 2]], atol=1e-6)  # one-piece words
    assert not np.allclose(first.sentence(0)[:, 1], mean.sentence(0)[:, 1])  # "unbelievable" has three pieces
    (tmp_path / "b" / "model.safetensors").write_bytes((tmp_path / "a" / "model.safetensors").read_bytes())
    assert cache(b).get(sentences, "t").directory == first.directory  # the key is the files, not the path


def test_live_layers_equal_cached_layers(tmp_path):
    model_dir = tiny_bert(tmp_path / "bert")
    cfg = _cfg(["encoder=transformer", f"encoder.model={model_dir}", f"cache.dir={tmp_path / 'cache'}"])
    sentences = [["the", "cat"], ["a", "big", "red", "dog", "sat"]]
    cached = encoder_for(as_run(cfg)).layer_source(sentences, "t").batch([1, 0])
    cfg.cache.enabled = False
    live = encoder_for(as_run(cfg)).layer_source(sentences, "t").batch([1, 0])
    np.testing.assert_allclose(cached[0].numpy(), live[0].numpy(), atol=1e-6)
    assert cached[1].tolist() == live[1].tolist()


def test_identities_keep_encoders_apart(tmp_path):
    resolved = OmegaConf.to_container(_cfg(["task=ner"]), resolve=True)
    identity = {"bilm_sha256": "x", "data_sha256": {}, "task_version": 1}
    bert = OmegaConf.to_container(_cfg(["task=ner", "encoder=transformer"]), resolve=True)
    assert run_digest(bert, identity) != run_digest(resolved, identity)


def test_evaluate_a_model_trained_on_a_transformer(tmp_path):
    model_dir = tiny_bert(tmp_path / "bert")
    out = tmp_path / "run"
    out.mkdir()
    cfg = _cfg(_task_overrides("ner", tmp_path, model_dir))
    trained = runner.train(as_run(cfg), out)
    report = trained_runs.evaluate(
        as_run(_cfg(["mode=evaluate", f"checkpoint={out}", f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}"]))
    )
    assert report["metrics"]["f1"] == pytest.approx(trained["dev"]["f1"])
    assert report["encoder_kind"] == "transformer" and report["encoder"]["sha256"] == trained["transformer"]["sha256"]
    other = tiny_bert(tmp_path / "other", seed=5)
    (model_dir / "model.safetensors").write_bytes((other / "model.safetensors").read_bytes())  # the files changed
    with pytest.raises(Exception, match="not the model this model was trained with"):
        trained_runs.evaluate(
            as_run(_cfg(["mode=evaluate", f"checkpoint={out}", f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}"]))
        )


def test_unknown_model_is_one_clear_error(tmp_path):
    cfg = _cfg(_task_overrides("ner", tmp_path, tmp_path / "no_such_model"))
    with pytest.raises(EncoderError, match="no such model directory"):
        runner.train(as_run(cfg), tmp_path / "run")
    with pytest.raises(Exception, match="not available with encoder=transformer"):
        runner.finetune(
            as_run(_cfg([*_task_overrides("ner", tmp_path, tiny_bert(tmp_path / "b")), "mode=finetune"])),
            tmp_path / "ft",
        )


def test_transformer_layers_report_their_shape_without_loading(tmp_path):
    model_dir = tiny_bert(tmp_path / "bert", layers=3)
    encoder = TransformerEncoder(str(model_dir), model_dir, "first", None, 8)
    assert encoder.layer_shape() == (4, 16) and "word_encoder" not in vars(encoder)  # nothing loaded


@pytest.mark.parametrize(
    "probe, extra, layers",
    [
        (
            "probe_pos",
            [
                "data.train_file=pos_tiny.txt",
                "data.dev_file=pos_tiny.txt",
                "trainer.max_epochs=3",
                "trainer.min_updates=0",
            ],
            {"0", "1", "2", "3", "mix"},
        ),
        (
            "probe_wsd",
            ["data.words=[wsd_tiny_hard,wsd_tiny_line]"],
            {"0", "1", "2", "3", "average", "most_frequent_sense"},
        ),
    ],
)
def test_probes_read_every_transformer_layer(probe, extra, layers, tmp_path):
    model_dir = tiny_bert(tmp_path / "bert", layers=3)
    out = tmp_path / probe
    out.mkdir()
    cfg = _cfg(
        [
            f"task={probe}",
            f"data.dir={SAMPLES[probe]}",
            "encoder=transformer",
            f"encoder.model={model_dir}",
            f"cache.dir={tmp_path / 'cache'}",
            *extra,
        ]
    )
    runner.train(as_run(cfg), out)
    record = json.loads((out / "results.json").read_text())
    assert set(record["dev"]["accuracy_per_layer"]) == layers and record["transformer"]["kind"] == "transformer"


def test_a_baseline_is_the_same_run_whichever_encoder_is_named():
    identity = {"bilm_sha256": None, "data_sha256": {}, "task_version": 1}
    digests = {
        run_digest(OmegaConf.to_container(_cfg(["task=srl", "elmo.position=none", *enc]), resolve=True), identity)
        for enc in ([], ["encoder=transformer"], ["encoder=transformer", "encoder.pooling=mean"])
    }
    assert len(digests) == 1
    probe = [
        run_digest(OmegaConf.to_container(_cfg(["task=probe_pos", *enc]), resolve=True), identity)
        for enc in ([], ["encoder=transformer"])
    ]
    assert probe[0] != probe[1]  # a probe always reads the encoder


@pytest.mark.parametrize("broken", ["model.safetensors", "config.json", "tokenizer.json"])
def test_a_broken_transformer_directory_is_one_line_and_leaves_nothing(tmp_path, broken):
    import shutil

    from run_configs import run_tiny_ner

    model_dir = tmp_path / "bert"
    shutil.copytree(REPO / "bert_core" / "pretrained" / "small", model_dir)
    data = (model_dir / broken).read_bytes()
    (model_dir / broken).write_bytes(data[: len(data) // 3])
    done = run_tiny_ner(tmp_path, "encoder=transformer", f"encoder.model={model_dir}", "+ablation=elmo", "threads=1")
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and str(model_dir) in last and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*"))
