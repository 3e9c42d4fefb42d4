"""The committed records (record_version 2): today's command-line keys compose to the identity each record was
given, every record's stored digest is the one its typed configuration gives, and the keys the encoder's and the
cache's settings had under ``elmo.*`` before 2026-11-23 name their new place on the command line."""

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from experiments.command_line import RENAMED, check_overrides, read
from experiments.plan import record_digest, run_digest
from experiments.record import RECORD_VERSION
from suite_common.errors import ConfigError
from tests.run_configs import CONF

ROOT = Path(__file__).resolve().parents[2]  # the repository
COMMITTED = sorted(ROOT.glob("results/**/results.json"))

# the quick profile's input and budget before the static vectors (2026-12-01)
BEFORE_VECTORS = ["task.model.vectors=null", "task.model.embedding_init=normal", "trainer.min_updates=0"]

# committed records of the earlier layout, and the command-line overrides that spell them today
SPELLED_TODAY = {
    "results/history/small-v1_quick/runs/ner/+ablation=elmo,elmo.state=stateful_warmup,profile=quick,seed=0,source=local": [  # noqa: E501
        "task=ner",
        "+ablation=elmo",
        "encoder.state=stateful_warmup",
        "elmo.dropout=0.5",
        *BEFORE_VECTORS,
        "seed=0",
    ],
    "results/history/small-v2_quick/float16/runs/ner/+ablation:elmo+elmo.cache_dtype:float16+profile:quick+seed:1+source:local": [  # noqa: E501
        "task=ner",
        "+ablation=elmo",
        "cache.dtype=float16",
        "elmo.dropout=0.5",
        *BEFORE_VECTORS,
        "seed=1",
    ],
    "results/history/small-v2_quick/runs/ner/+ablation:elmo+encoder:transformer+profile:quick+seed:0+source:local": [
        "task=ner",
        "+ablation=elmo",
        "encoder=transformer",
        "elmo.dropout=0.5",
        *BEFORE_VECTORS,
        "seed=0",
    ],
    "results/history/paper_small-v2/runs/ner/+ablation:baseline+profile:paper+seed:0+source:local": [
        "task=ner",
        "+ablation=baseline",
        "profile=paper",
        "task.model.embedding_init=normal",
        "task.model.vectors=null",
        "task.model.dropout_style=variational",
        "task.model.crf_constraints=training_and_decoding",
        "elmo.dropout=0.5",
        "seed=0",
    ],
}


def composed(overrides: list[str]) -> dict:
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=["source=local", *overrides])
    return OmegaConf.to_container(cfg, resolve=True)


@pytest.mark.parametrize("run_dir", sorted(SPELLED_TODAY))
def test_todays_keys_compose_to_the_identity_the_record_was_given(run_dir):
    record = json.loads((ROOT / run_dir / "results.json").read_text())
    config = composed(SPELLED_TODAY[run_dir])
    assert run_digest(config, record["identity"]) == record["config_hash"]


def test_every_committed_record_is_of_this_version_and_has_the_digest_its_typed_configuration_gives():
    assert len(COMMITTED) > 100
    untyped = []
    for path in COMMITTED:
        record = json.loads(path.read_text())
        assert record["record_version"] == RECORD_VERSION, path
        assert not any(k in record["config"]["elmo"] for k in ("state", "cache", "cache_dir", "options")), path
        digest = record_digest(record)
        if digest is None:  # a key since removed: no run configured today is that run
            untyped.append(path.relative_to(ROOT).parts[1])
            continue
        assert digest == record["config_hash"], path
    # the POS probe's records of before it was a task: the first biLM's, and the second biLM's and BERT's beside it
    assert sorted(untyped) == ["history", "history", "history"]


def test_a_transformer_configuration_carries_no_bilm_keys():
    config = composed(["task=ner", "encoder=transformer"])
    assert set(config["elmo"]) == {"position", "mix", "l2", "dropout", "layer_norm"}
    assert not {"state", "options", "finetune"} & set(config["encoder"])
    assert config["cache"]["enabled"] is True
    bilm = composed(["task=ner"])
    assert {"state", "options", "weights", "finetune", "batch_size"} <= set(bilm["encoder"])


@pytest.mark.parametrize(
    "old", ["elmo.state=stateful", "elmo.cache=false", "+elmo.cache_dtype=float16", "elmo.options=o.json"]
)
def test_an_earlier_key_on_the_command_line_names_the_new_one(old):
    key = old.lstrip("+").split("=")[0]
    with pytest.raises(ConfigError) as e:
        check_overrides(read(["task=ner", old]))
    message = str(e.value)
    assert "\n" not in message and f"{key} is now {RENAMED[key]}" in message and "nothing was run" in message


def test_a_transformer_identity_counts_its_model_files():
    config = composed(["task=ner", "encoder=transformer"])
    now = {"data_sha256": {"train": "t"}, "task_version": 1, "encoder_sha256": "e"}
    assert run_digest(config, now) != run_digest(config, {**now, "encoder_sha256": "f"})
