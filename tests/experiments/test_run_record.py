"""The typed run record and the run plan: every record ever committed reads and is written
back with the same content; what a run was (setting, biLM, encoder, position) is read off the record;
the plan decides a run's kind, position, encoder use, identity and record once."""

import json

import pytest
from conftest import REPO, SAMPLES
from run_configs import tiny_ner_run_cfg as _ner

from experiments import runner
from experiments.plan import RunPlan, run_digest
from experiments.record import RECORD_VERSION, Record, RecordSchemaError
from experiments.run_config import as_run
from suite_common.errors import DataError
from tasks.common.data_files import data_files

COMMITTED = sorted(p for name in ("results.json", "finetune.json") for p in (REPO / "results").glob(f"**/{name}"))


def test_every_committed_record_reads_and_writes_back_the_same_content_and_identity(tmp_path):
    assert len(COMMITTED) > 100
    for path in COMMITTED:
        raw = json.loads(path.read_text())
        record = Record.read(path)
        record.write(tmp_path / "r.json")
        assert json.loads((tmp_path / "r.json").read_text()) == raw, path
        assert record.digest() == raw["config_hash"], path  # the digest a record carries is the one its content gives


def _record(**fields) -> Record:
    config = {
        "seed": 1,
        "task": {"name": "ner", "elmo_position": "input"},
        "elmo": {"position": "paper", "mix": "all", "l2": 0.1},
        "encoder": {"kind": "bilm", "state": "stateless", "finetune": False},
        "data": {"dir": "d", "fraction": 0.1},
    }
    return Record.from_dict(
        {
            "record_version": RECORD_VERSION,
            "config": config,
            "task": "ner",
            "metric": "f1",
            "dev": {"f1": 70.0},
            "test": None,
            "elmo_position": "input",
            "epochs": 3,
            "identity": {"bilm_sha256": "b" * 64},
            "bilm": {"sha256": "f" * 64},
            **fields,
        }
    )


def test_what_a_run_was_is_read_off_its_record():
    r = _record(ablation=None, profile="quick")
    assert (r.setting, r.position, r.uses_encoder, r.seed, r.value, r.fraction) == ("elmo", "input", True, 1, 70.0, 0.1)
    assert r.bilm_sha256 == "b" * 64  # the identity's biLM (a fine-tuned run's base), not the stored weights' hash
    assert r.choices == ("task=ner", "source=local", "profile=quick") and r.encoder is None
    assert _record(ablation="all_lambda1").setting == "all_lambda1"
    baseline = _record(
        elmo_position="none", identity=None, config={**r.config, "elmo": {**r.config["elmo"], "position": "none"}}
    )
    assert (baseline.setting, baseline.uses_encoder, baseline.bilm_sha256) == ("baseline", False, None)
    tuned = _record(config={**r.config, "encoder": {"kind": "bilm", "state": "stateful", "finetune": True}})
    assert tuned.setting == "elmo+state=stateful,finetuned biLM"
    bert = _record(
        identity={"bilm_sha256": None, "encoder_sha256": "e" * 64},
        bilm={"model": "/m/bert-base"},
        config={**r.config, "encoder": {"kind": "transformer", "pooling": "mean"}},
    )
    assert bert.encoder == f"bert-base ({'e' * 12}, mean of pieces)" and bert.setting == "elmo+encoder=transformer"
    assert bert.choices[-1] == "encoder=transformer"


def test_unknown_keys_are_kept_and_a_task_model_record_keeps_its_null_test():
    r = _record(some_future_key=[1, 2])
    assert r.to_dict()["some_future_key"] == [1, 2] and r.to_dict()["test"] is None
    probe = Record.from_dict(
        {"record_version": RECORD_VERSION, "config": {}, "task": "probe_pos", "dev": {"accuracy_per_layer": {}}}
    )
    assert "test" not in probe.to_dict() and probe.is_probe


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"task": "ner"', "unreadable run record"),
        ('{"task": "ner"}', "no 'config' object"),
        ('{"record_version": 2, "config": {}}', "no task"),
        ('{"config": {}, "task": "ner"}', "record_version None, this suite reads 2"),
    ],
)
def test_a_file_that_is_not_a_record_is_refused_naming_it(tmp_path, text, message):
    (tmp_path / "results.json").write_text(text)
    with pytest.raises(DataError, match=f"{tmp_path / 'results.json'}: .*{message}"):
        Record.read(tmp_path / "results.json")


def test_the_plan_decides_kind_position_encoder_use_and_record_once(bilm_files, tmp_path):
    plan = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path)))
    assert (plan.kind, plan.run.position, plan.run.reads_encoder) == ("task", "input", True)
    assert plan.record_name == "results.json"
    assert plan.identity["bilm_sha256"] == plan.encoder.sha256
    assert set(data_files(plan.run.data)) == {"train", "dev"}
    assert plan.digest == run_digest(plan.resolved, plan.identity)
    baseline = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=none")))
    assert (baseline.run.position, baseline.run.reads_encoder) == ("none", False)
    assert baseline.identity["bilm_sha256"] is None
    tuning = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path)), finetune=True)
    assert (tuning.kind, tuning.record_name) == ("finetune", "finetune.json")


def test_the_record_a_run_writes_is_what_the_report_reads(bilm_files, tmp_path):
    launch = tmp_path / "runs" / "ner" / "x"
    done = runner.train(as_run(_ner(bilm_files, tmp_path)), launch)
    record = Record.read(launch / "results.json")
    assert record.to_dict() == done and record.position == "input" and record.test is None
    assert record.digest() == done["config_hash"] and record.bilm_sha256 == done["identity"]["bilm_sha256"]


def test_a_record_is_read_into_its_typed_configuration_once_with_the_settings_defaults():
    r = _record(
        config={**_record().config, "task": {"name": "ner", "elmo_position": "input", "model": {"dropout": 0.4}}}
    )
    assert r.run is r.run and r.run.task.name == "ner" and r.settings_since_removed == ()
    assert (r.run.data.fraction, r.run.trainer.keep, r.run.encoder.state) == (0.1, "best_dev", "stateless")
    assert r.run.task.model.embedding_init == "normal"  # a key the record lacks: the value it had then (``earlier``)
    assert (r.run.task.model.dropout, r.run.task.model.word_dim) == (
        0.4,
        50,
    )  # as stored; today's default of the task's own class (tasks/ner/config.py)


def test_a_setting_since_removed_is_named_and_left_out_of_the_typed_form():
    config = {**_record().config, "task": {"name": "ner", "elmo_position": "input", "batch_size": 8}}
    r = _record(config=config)
    assert r.settings_since_removed == ("task.batch_size",) and r.run.task.name == "ner"
    assert r.to_dict()["config"]["task"]["batch_size"] == 8  # kept as stored


def test_a_composed_configuration_of_values_no_setting_takes_is_not_a_record_the_suite_writes():
    config = {**_record().config, "elmo": {"position": "sideways"}}
    with pytest.raises(RecordSchemaError, match="elmo.position='sideways'"):
        _record(config=config)


def test_the_record_a_run_writes_carries_the_runs_own_typed_configuration(bilm_files, tmp_path):
    run = as_run(_ner(bilm_files, tmp_path))
    launch = tmp_path / "runs" / "ner" / "x"
    runner.train(run, launch)
    assert Record.read(launch / "results.json").run == run  # what the report reads back is what ran
