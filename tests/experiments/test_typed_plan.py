"""The typed plan (experiments.run_config): every setting is a typed field that declares beside itself whether it
counts in a run's identity; every file a run reads counts by its content; defaults live in one place; the packages
below experiments never see an untyped configuration; every mode builds its run through the plan."""

import ast
import dataclasses
import json
import typing

import pytest
from conftest import REPO, SAMPLES, random_bilm
from omegaconf import OmegaConf
from run_configs import compose_cfg
from run_configs import tiny_ner_run_cfg as _ner

from elmo_core import save_bilm
from encoders.config import BilmConfig, CacheConfig, TransformerConfig
from experiments import config_store, runner
from experiments.pipeline import build_run
from experiments.plan import RunPlan
from experiments.run_config import RunConfig, as_run, data_config_class, task_config_class
from suite_common import hashing
from suite_common.errors import ConfigError
from suite_common.typed_config import file_settings, plain
from tasks.common.config import DataConfig, ElmoConfig, SenseProbeData, TaggedProbeData, TrainerConfig
from tasks.registry import available

GROUPS = [RunConfig, ElmoConfig, TrainerConfig, BilmConfig, TransformerConfig, CacheConfig, DataConfig]
GROUPS += [TaggedProbeData, SenseProbeData] + [task_config_class(name) for name in available()]


def every_class(classes):
    seen = []
    for cls in classes:
        for f in dataclasses.fields(cls):
            if f.metadata.get("group"):
                seen += every_class([type(f.default_factory())])
        seen.append(cls)
    return list(dict.fromkeys(seen))


@pytest.mark.every_task
def test_a_field_that_holds_a_path_counts_by_its_content_or_is_where_files_are_looked_up():
    """A new path-valued setting cannot be forgotten: typed as a path it must be a file field (its content hashed
    into the identity), and a text field named like a path is either that or a place the data's files are found in
    (a Hugging Face dataset's names, ``hf_*``, are names on the hub, not local files)."""
    pathlike = ("path", "dir", "file", "options", "weights", "vectors", "model")
    for cls in every_class(GROUPS):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if annotation_mentions_path(cls, f):
                assert f.metadata.get("hash_name"), (cls.__name__, f.name)
            elif f.name.endswith(pathlike) and "str" in str(hints[f.name]) and not f.name.startswith("hf_"):
                assert not f.metadata["counts"] or f.name.endswith("_file"), (cls.__name__, f.name)


def test_every_file_field_of_a_run_is_hashed_into_its_identity(bilm_files, tmp_path):
    """The plan hashes every file-valued field that counts in the run (an unset one counts as unset), and refuses
    an encoder that cannot hash one."""
    vectors = tmp_path / "vec.txt"
    vectors.write_text("EU 0.1 0.2\n")
    plan = RunPlan.resolve(
        as_run(_ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=input", f"task.model.vectors={vectors}"))
    )
    wanted = {"bilm_sha256", "bilm_options_sha256", "files_sha256"}
    assert wanted <= set(plan.identity) and plan.identity["files_sha256"]["task.model.vectors"]
    assert set(file_settings(plan.run, plan.run)) == {"encoder.options", "encoder.weights", "task.model.vectors"}
    assert plan.identity["bilm_sha256"] == plan.encoder.file_hashes()["weights"]


@pytest.mark.parametrize("field", ["options", "weights", "vectors"])
def test_changing_what_any_file_field_holds_changes_the_digest(field, bilm_files, tmp_path):
    options, weights = bilm_files
    vectors = tmp_path / "vec.txt"
    vectors.write_text("EU 0.1 0.2\n")
    files = {"options": tmp_path / "o.json", "weights": tmp_path / "w.hdf5", "vectors": vectors}
    files["options"].write_bytes(options.read_bytes())
    files["weights"].write_bytes(weights.read_bytes())

    def digest():
        hashing._file_sha256.cache_clear()
        cfg = _ner((files["options"], files["weights"]), tmp_path, SAMPLES["ner"], "elmo.position=input",
                   f"task.model.vectors={vectors}")  # fmt: skip
        return RunPlan.resolve(as_run(cfg)).digest

    before = digest()
    if field == "options":  # the same network read another way: tanh instead of relu
        opts = json.loads(files["options"].read_text())
        opts["char_cnn"]["activation"] = "tanh"
        files["options"].write_text(json.dumps(opts))
    elif field == "weights":
        save_bilm(random_bilm(seed=7), tmp_path / "other.json", files["weights"])
    else:
        vectors.write_text("EU 0.3 0.2\n")
    assert digest() != before


def test_no_package_below_experiments_imports_omegaconf():
    for package in ("tasks", "encoders", "elmo_core", "bert_core", "static_vectors", "suite_common"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                assert not any(n.split(".")[0] in ("omegaconf", "hydra") for n in names), path


def test_the_task_its_model_and_the_encoder_get_typed_settings(bilm_files, tmp_path):
    plan = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=input")))
    built = build_run(plan, layers=False)
    assert dataclasses.is_dataclass(built.task.cfg) and dataclasses.is_dataclass(built.task.cfg.model)
    assert type(plan.run.encoder) is BilmConfig and dataclasses.is_dataclass(plan.run.data)
    assert not any(isinstance(v, OmegaConf.__class__) for v in vars(plan).values())


def _yaml(path):
    return OmegaConf.to_container(OmegaConf.load(REPO / "conf" / path), resolve=False)


def repeated_defaults(written: dict, defaults: dict, where: str = "") -> list[str]:
    """The keys of ``written`` whose value is the default beside it (nested mappings walked)."""
    out = []
    for key, value in written.items():
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            out += repeated_defaults(value, defaults[key], f"{where}{key}.")
        elif key in defaults and defaults[key] == value:
            out.append(f"{where}{key}")
    return out


@pytest.mark.every_task
def test_the_base_of_every_group_is_its_dataclass_registered_in_hydras_store():
    """A default is defined once: the ConfigStore holds each typed group's defaults, and no group's
    base is a YAML file."""
    from hydra.core.config_store import ConfigStore

    repo = ConfigStore.instance().repo
    for (group, name), cls in config_store.GROUP_DEFAULTS.items():
        assert OmegaConf.to_container(repo[group][f"{name}.yaml"].node) == plain(cls(), base=True), group
        assert not (REPO / "conf" / group).exists(), group
    for name in available():
        assert OmegaConf.to_container(repo["task_defaults"][f"{name}.yaml"].node) == plain(task_config_class(name)())
    assert not (REPO / "conf" / "task_profile").exists()
    # conf/data holds only other data sets for a task (conf/data/wnut17.yaml), never a task's own data
    own = {f"{task}_{source}.yaml" for task in available() for source in ("hf", "local")}
    assert not own & {p.name for p in (REPO / "conf" / "data").glob("*.yaml")}


@pytest.mark.every_task
def test_no_base_yaml_file_repeats_a_dataclass_default():
    """``conf/config.yaml`` and each task file hold only what differs from the typed defaults: the task's
    settings, its data (from the data group's defaults) and each source (from the task's data)."""
    from hydra.core.config_store import ConfigStore

    config_store.register()
    top = {k: v for k, v in _yaml("config.yaml").items() if k not in ("defaults", "hydra")}
    found = repeated_defaults(top, OmegaConf.to_container(ConfigStore.instance().repo["run_defaults.yaml"].node))
    for name in available():
        spec = _yaml(f"task/{name}.yaml")
        settings = {k: v for k, v in spec.items() if k not in config_store.TASK_FILE_SECTIONS}
        found += [f"{name}: {k}" for k in repeated_defaults(settings, plain(task_config_class(name)()))]
        data = {**plain(data_config_class(name)()), **(spec.get("data") or {})}
        found += [
            f"{name}: data.{k}" for k in repeated_defaults(spec.get("data") or {}, plain(data_config_class(name)()))
        ]
        for source, node in (spec.get("sources") or {}).items():
            found += [f"{name}: sources.{source}.{k}" for k in repeated_defaults(node or {}, data)]
    assert not found, found


def test_the_repeat_check_finds_a_repeated_default():
    assert repeated_defaults(
        {"model": {"word_dim": 50, "hidden": [1]}}, {"model": {"word_dim": 50, "hidden": [2]}}
    ) == ["model.word_dim"]


def test_a_bad_value_or_an_unknown_key_is_one_line_naming_it():
    with pytest.raises(ConfigError, match=r"^trainer\.optimizer='sgd': must be 'adam' or 'adadelta'$"):
        as_run({"task": {"name": "ner"}, "trainer": {"optimizer": "sgd"}})
    with pytest.raises(ConfigError, match=r"^task\.model\.dropout_styl: no such setting \(did you mean dropout_style"):
        as_run({"task": {"name": "ner", "model": {"dropout_styl": "standard"}}})
    with pytest.raises(ConfigError, match=r"^elmo\.l2=nan: must be a finite number$"):
        as_run({"task": {"name": "ner"}, "elmo": {"l2": float("nan")}})


@pytest.mark.parametrize("mode", ["dry_run", "evaluate", "predict", "embed_sample", "train"])
def test_every_mode_builds_its_run_through_the_plan(mode, bilm_files, tmp_path, monkeypatch, capsys):
    """train and dry_run build through ``pipeline.build_run``; evaluate and predict rebuild a trained run through the
    plan of its checkpoint's configuration; embed_sample takes the plan's encoder."""
    launch = tmp_path / "runs" / "ner" / "run"
    trained = (
        runner.train(as_run(_ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=input")), launch)
        if mode != "train"
        else None
    )
    import importlib

    resolved, built = [], []
    real_resolve = RunPlan.resolve.__func__
    monkeypatch.setattr(
        RunPlan, "resolve", classmethod(lambda cls, *a, **k: resolved.append(1) or real_resolve(cls, *a, **k))
    )
    for name in ("runner", "trained_runs", "dry_run"):  # every mode's module, where it took build_run from
        module = importlib.import_module(f"experiments.{name}")
        monkeypatch.setattr(module, "build_run", lambda *a, **k: built.append(1) or build_run(*a, **k))
    cfg = _ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=input", f"mode={mode}")
    if mode == "train":
        runner.train(as_run(cfg), tmp_path / "runs" / "ner" / "again")
    elif mode == "dry_run":  # of a configuration not trained yet (one with its record says skip, building nothing)
        from experiments.dry_run import dry_run

        dry_run(as_run(_ner(bilm_files, tmp_path, SAMPLES["ner"], "elmo.position=input", "mode=dry_run", "seed=7")))
    elif mode in ("evaluate", "predict"):
        from experiments.predictor import predict_mode
        from experiments.trained_runs import evaluate

        raw = tmp_path / "raw.txt"
        raw.write_text("EU rejects German call\n")
        test = SAMPLES["ner"] / "ner_tiny.conll" if mode == "evaluate" else raw
        cfg = compose_cfg([f"mode={mode}", f"checkpoint={trained['run_dir']}", f"data.test_path={test}"])
        (evaluate if mode == "evaluate" else predict_mode)(as_run(cfg), tmp_path / "out")
    else:
        from experiments.embed_sample import embed_sample

        (tmp_path / "sample").mkdir()
        sample = ["embed_sample.limit=3", f"embed_sample.sentences={SAMPLES['ner'] / 'ner_tiny.conll'}"]
        bilm = [f"encoder.options={bilm_files[0]}", f"encoder.weights={bilm_files[1]}"]
        embed_sample(as_run(compose_cfg(sample + bilm)), tmp_path / "sample")
    assert resolved, f"mode={mode} did not resolve a plan"
    if mode != "embed_sample":
        assert built, f"mode={mode} did not build through the plan"


def test_a_setting_added_after_records_is_left_out_at_its_default_whatever_its_kind():
    """A list default (built by a factory) and a choice count only when changed."""
    from typing import Literal

    from suite_common import typed_config as tc

    @tc.settings_group
    class Group:
        sizes: list = tc.setting([1, 2], added_after_records=True)
        colour: Literal["red", "blue"] = tc.setting("red", added_after_records=True)
        kept: int = tc.setting(3)

    for given in ({}, {"sizes": [1, 2], "colour": "red"}):
        assert tc.counted(tc.build(Group, given, ""), None, {}) == {"kept": 3}
    changed = tc.counted(tc.build(Group, {"sizes": [4], "colour": "blue"}, ""), None, {})
    assert changed == {"sizes": [4], "colour": "blue", "kept": 3}


def annotation_mentions_path(cls, f) -> bool:
    """Whether a field's type says it holds a path (``FilePath``)."""
    import typing

    return "FilePath" in str(typing.get_type_hints(cls).get(f.name, ""))
