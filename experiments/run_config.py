"""A run's configuration resolved once into typed groups (Peters et al. 2018 §3.2-3.4: the ELMo mix, the frozen
encoder that feeds it, the task and its trainer). ``as_run`` is the one converter: a composed configuration,
a plain mapping (a record's) or a ``RunConfig`` becomes the ``RunConfig``. The groups whose class follows a
value are built first: ``task`` (the ``CONFIG`` its folder's ``config.py`` names), ``data`` (that class's
``DATA``, else ``DataConfig``) and ``encoder`` (by ``encoder.kind``).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from functools import lru_cache
from typing import Literal

from encoders.config import BilmConfig, CacheConfig, TransformerConfig
from suite_common.errors import ConfigError
from suite_common.typed_config import (
    PathText,
    build,
    checked,
    declared_only,
    group,
    integer,
    setting,
    settings_group,
)
from tasks.common.config import DataConfig, ElmoConfig, TaskConfig, TrainerConfig
from tasks.registry import DEFAULT_TASK

from .threads import threads_problem
from .training_log import LOGGERS

SEED_MAX = 2**32 - 1  # numpy's seed range; Python's and torch's are wider
MODES = ("train", "evaluate", "predict", "finetune", "embed_sample", "dry_run")
TASK_FILE_SECTIONS = ("data", "sources", "profiles")  # read from conf/task/<name>.yaml when composing; not settings
ENCODERS = {"bilm": BilmConfig, "transformer": TransformerConfig}


@settings_group
class EmbedSampleConfig:
    sentences: PathText = setting("../shared/data/conll2003/eng.testa")
    limit: integer(1) = setting(500)
    batch_size: integer(1) = setting(64)
    out: PathText = setting("outputs/embed_sample")


def placement(position, task_position) -> str:
    """Where ELMo goes: ``elmo.position``, with ``paper`` meaning the task's own."""
    return task_position if position == "paper" else position


def reads_layers(task_name: str, mode: str, position: str) -> bool:
    """Whether a run reads contextual layers: ELMo at some position, a probe, or a biLM fine-tuning."""
    return str(task_name).startswith("probe_") or mode == "finetune" or position != "none"


def _device_problem(v):
    return (
        None if isinstance(v, str) and re.fullmatch(r"cpu|cuda(:\d+)?|mps", v) else "must be cpu, cuda, cuda:N or mps"
    )


@settings_group
class RunConfig:
    mode: Literal[MODES] = setting("train", counts=False)
    seed: integer(0, SEED_MAX) = setting(0)
    device: checked(str, _device_problem) = setting("cpu", counts=False)
    threads: checked(object, threads_problem) = setting("auto", counts=False)
    checkpoint: PathText | None = setting(None, counts=False)
    runs_root: PathText = setting("outputs/runs", counts=False)
    logger: Literal[LOGGERS] = setting("tensorboard", counts=False)  # live curves (experiments/training_log.py)
    # the source group only chooses the data files (the task file's data and sources); it holds no settings
    source: checked(dict, lambda v: None if v == {} else "is chosen as source=hf or source=local") = setting({})
    task: object = group(lambda: task_config_class(DEFAULT_TASK)())
    data: object = group(DataConfig)  # its class follows the task (``data_config_class``)
    elmo: ElmoConfig = group(ElmoConfig)
    encoder: object = group(BilmConfig, when=lambda run: run.reads_encoder)
    cache: CacheConfig = group(CacheConfig)
    trainer: TrainerConfig = group(TrainerConfig)
    embed_sample: EmbedSampleConfig = group(EmbedSampleConfig, counts=False)

    @property
    def position(self) -> str:
        return placement(self.elmo.position, self.task.elmo_position)

    @property
    def reads_encoder(self) -> bool:
        return reads_layers(self.task.name, self.mode, self.position)


def as_run(cfg) -> RunConfig:
    """The typed run of a composed configuration, a plain mapping or a ``RunConfig`` (built once per content)."""
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, RunConfig):
        return cfg
    mapping = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else cfg
    if not isinstance(mapping, dict | None):
        raise ConfigError(f"a configuration must be a mapping of its settings, not {type(mapping).__name__}")
    return _built(json.dumps(mapping or {}, sort_keys=True, default=str))


@lru_cache(maxsize=1024)
def _built(text: str) -> RunConfig:
    mapping = json.loads(text)
    task = mapping.get("task") or {}
    if not isinstance(task, dict):
        raise ConfigError(f"task={task!r}: must be a mapping of its settings")
    task = {k: v for k, v in task.items() if k not in TASK_FILE_SECTIONS}
    encoder = mapping.get("encoder") or {}
    kind = encoder.get("kind", "bilm") if isinstance(encoder, dict) else "bilm"
    if kind not in ENCODERS:
        raise ConfigError(f"encoder.kind={kind!r}: must be one of {', '.join(ENCODERS)}")
    mapping["task"] = build(task_config_class(str(task.get("name", ""))), task, "task.")
    mapping["data"] = build(data_config_class(mapping["task"].name), mapping.get("data"), "data.")
    mapping["encoder"] = build(ENCODERS[kind], encoder, "encoder.")
    return build(RunConfig, mapping, "")


def stored_run(mapping: dict, task_name: str) -> tuple[RunConfig, tuple[str, ...]]:
    """A stored configuration (a record's) in its typed form, and the settings it held that no class declares
    today (settings since removed: left out, named). Its task is ``task_name`` where it names none; a task
    not in this checkout reads as the common task settings. Every default is its settings class's own, so
    a record read here and a run configured today agree on what a missing key meant."""
    return _stored(json.dumps(mapping, sort_keys=True, default=str), task_name)


@lru_cache(maxsize=1024)
def _stored(text: str, task_name: str) -> tuple[RunConfig, tuple[str, ...]]:
    from tasks.registry import available

    mapping = json.loads(text)
    task = {k: v for k, v in (mapping.get("task") or {}).items() if k not in TASK_FILE_SECTIONS}
    task.setdefault("name", task_name)
    known = task["name"] in available()
    encoder = mapping.get("encoder") or {}
    classes = {
        "task": task_config_class(task["name"]) if known else TaskConfig,
        "data": data_config_class(task["name"]) if known else DataConfig,
        "encoder": ENCODERS.get(encoder.get("kind", "bilm"), BilmConfig),
    }
    kept, removed = declared_only(RunConfig, {**mapping, "task": task, "data": mapping.get("data") or {}})
    for key, cls in classes.items():
        kept[key], gone = declared_only(cls, kept.get(key) or {}, f"{key}.")
        kept[key] = build(cls, kept[key], f"{key}.")
        removed += gone
    return build(RunConfig, kept, ""), tuple(removed)


def task_config_class(name: str) -> type:
    """The ``CONFIG`` of ``tasks/<name>/config.py`` (a probe function's: of its module)."""
    from tasks.registry import available, is_probe_function

    if name not in available():
        raise ConfigError(f"unknown task {name!r} (available: {', '.join(available())})")
    where = f"tasks.probes.{name.removeprefix('probe_')}" if is_probe_function(name) else f"tasks.{name}.config"
    cls = getattr(importlib.import_module(where), "CONFIG", None)
    if not dataclasses.is_dataclass(cls):
        raise ConfigError(f"{where} must name its task's settings class as CONFIG")
    return cls


def data_config_class(name: str) -> type:
    return getattr(task_config_class(name), "DATA", DataConfig)


def _keys(cls, where: str, counting: bool) -> list[str]:
    out = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("group"):
            out += _keys(type(f.default_factory()), f"{where}{f.name}.", counting) if f.metadata["counts"] else []
        elif f.metadata.get("counts", True) == counting:
            out.append(f"{where}{f.name}")
    return out


def non_counting_keys() -> list[str]:
    """Every setting that counts in no run's identity, whatever the task, the data's shape or the encoder."""
    from tasks.registry import available

    names = available()
    groups = [(RunConfig, "")] + [(c, "data.") for c in dict.fromkeys(data_config_class(n) for n in names)]
    groups += [(cls, "encoder.") for cls in ENCODERS.values()] + [(CacheConfig, "cache.")]
    groups += [(task_config_class(n), "task.") for n in names]
    counting = {k for cls, where in groups for k in _keys(cls, where, True)}
    keys = [k for cls, where in groups for k in _keys(cls, where, False)]
    return [k for k in dict.fromkeys(keys) if k not in counting and not k.startswith("embed_sample")]


def run_dir_excludes() -> list[str]:
    """Overrides that do not name a run directory: the task (the directory above) and every non-counting setting."""
    return ["task", *non_counting_keys()]


def evaluate_overrides() -> tuple[str, ...]:
    """What ``mode=evaluate`` takes from its command line over the checkpoint's own settings: the data and
    where the encoder's files and cache are."""
    return ("data.", *[k for k in non_counting_keys() if k.split(".")[0] in ("encoder", "cache")])
