"""A run's configuration resolved once into typed groups (Peters et al. 2018 §3.2-3.4: the ELMo mix,
the frozen encoder that feeds it, the task and its trainer), and the run's identity derived from them.

``RunConfig.from_resolved(mapping)`` builds every group from a composed configuration (or a record's
stored one, in today's layout): ``elmo`` (``ElmoConfig``), ``encoder`` (``BilmConfig`` or
``TransformerConfig`` by ``encoder.kind``), ``cache``, ``trainer``, ``data`` and ``task`` (the class
the task's folder declares in its ``config.py``). Unknown keys and values a field cannot take stop
the run with one line naming the key.

Each field declares beside itself whether it counts in a run's identity (``suite_common.typed_config``);
``experiments.identity`` walks them. ``typed`` and ``as_run`` make a ``RunConfig`` of a plain or composed configuration;
``non_counting_keys`` (run directory names, what ``mode=evaluate`` takes from its command line) is read
off the fields' declarations.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
from functools import lru_cache

from encoders.config import BilmConfig, CacheConfig, encoder_config_class
from suite_common.errors import ConfigError
from suite_common.typed_config import (
    COUNTS,
    RUNTIME,
    Flag,
    PathText,
    Probability,
    build,
    checked,
    group,
    integer,
    number,
    one_of,
    role,
    setting,
    settings_group,
)
from tasks.common.config import DataConfig, SenseProbeData, TaggedProbeData

from .settings import effective_position, uses_encoder
from .training_log import LOGGERS

SEED_MAX = 2**32 - 1  # numpy's seed range; Python's and torch's are wider


class Position(enum.StrEnum):
    """Where ELMo goes (§3.3): with x_k (input), with h_k (output), both, none, or the task's own (paper).
    A ``StrEnum``: it compares, prints and serializes as its value."""

    NONE = "none"
    INPUT = "input"
    OUTPUT = "output"
    BOTH = "both"
    PAPER = "paper"


@settings_group
class ElmoConfig:
    position: Position = setting(Position.PAPER)  # paper: task.elmo_position
    mix: one_of("all", "last", "average") = setting("all")
    l2: number(0) = setting(0.001)
    dropout: Probability = setting(0.5)
    layer_norm: Flag = setting(False)


def _equal_updates_count(run) -> bool:
    return bool(run.trainer.equal_updates) and float(getattr(run.data, "fraction", 1.0)) < 1


@settings_group
class TrainerConfig:
    optimizer: one_of("adam", "adadelta") = setting("adam")
    lr: number(0, low_open=True) = setting(0.001)
    adadelta_rho: number(0, 1, low_open=True, high_open=True) = setting(0.95)
    batch_size: integer(1) = setting(32)
    eval_batch_size: integer(1) = setting(128)
    max_epochs: integer(1) = setting(30)
    patience: integer(1) = setting(5)
    grad_clip: number(0) = setting(5.0)
    weight_decay: number(0) = setting(0.0)
    ema: Probability = setting(0.0)
    lr_halving: Flag = setting(False)
    equal_updates: Flag = setting(False, when=_equal_updates_count)


@settings_group
class EmbedSampleConfig:
    sentences: PathText = setting("../shared/data/conll2003/eng.testa", identity=RUNTIME)
    limit: integer(1) = setting(500, identity=RUNTIME)
    batch_size: integer(1) = setting(64, identity=RUNTIME)
    out: PathText = setting("outputs/embed_sample", identity=RUNTIME)


def _threads_check(v):
    import os

    top = 4 * (os.cpu_count() or 1)  # beyond this OpenMP fails to start its threads (config_schema.THREADS_MAX)
    if v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= top):
        return None
    return f"must be auto or a whole number from 1 to {top} (this machine has {os.cpu_count()} CPUs)"


def _device_check(v):
    import re

    ok = isinstance(v, str) and re.fullmatch(r"cpu|cuda(:\d+)?|mps", v)
    return None if ok else "must be cpu, cuda, cuda:N or mps"


# the sections of conf/task/<name>.yaml read when the configuration is composed (``config_store``), not settings
TASK_FILE_SECTIONS = ("data", "sources", "profiles")


def _no_source_settings(v):
    return None if v == {} else "is chosen as source=hf or source=local"


MODES = ("train", "evaluate", "predict", "finetune", "embed_sample", "dry_run")


@settings_group
class RunConfig:
    mode: one_of(*MODES) = setting("train", identity=RUNTIME)
    seed: integer(0, SEED_MAX) = setting(0)
    device: checked(str, _device_check) = setting("cpu", identity=RUNTIME)
    threads: checked(object, _threads_check) = setting("auto", identity=RUNTIME)
    checkpoint: PathText | None = setting(None, identity=RUNTIME)
    runs_root: PathText = setting("outputs/runs", identity=RUNTIME)
    # live training curves in the run directory (experiments/training_log.py); never part of a run's identity
    logger: one_of(*LOGGERS) = setting("tensorboard", identity=RUNTIME)
    # the source group only chooses the data files (the task file's data and sources); it holds no settings
    source: checked(dict, _no_source_settings) = setting({})
    task: object = group(lambda: task_config_class("ner")())
    data: object = group(DataConfig)  # its class follows the task (``data_config_class``)
    elmo: ElmoConfig = group(ElmoConfig)
    encoder: object = group(BilmConfig, when=uses_encoder)
    cache: CacheConfig = group(CacheConfig)
    trainer: TrainerConfig = group(TrainerConfig)
    embed_sample: EmbedSampleConfig = group(EmbedSampleConfig, identity=RUNTIME)

    @classmethod
    def from_resolved(cls, mapping: dict) -> RunConfig:
        """The typed configuration of a composed (resolved) one; ``ConfigError`` names a bad key."""
        mapping = dict(mapping or {})
        task = mapping.get("task") or {}
        if not isinstance(task, dict):
            raise ConfigError(f"task={task!r}: must be a mapping of its settings")
        task = {k: v for k, v in task.items() if k not in TASK_FILE_SECTIONS}  # read when composing, not settings
        name = str(task.get("name", ""))
        encoder = mapping.get("encoder") or {}
        # the groups whose class follows a value: the task's own, its data's, the encoder's kind
        mapping["task"] = build(task_config_class(name), task, "task.")
        mapping["data"] = build(data_config_class(name), mapping.get("data"), "data.")
        mapping["encoder"] = build(encoder_config_class(encoder), encoder, "encoder.")
        return build(cls, mapping, "")

    @property
    def position(self) -> str:
        return effective_position(self)

    @property
    def reads_encoder(self) -> bool:
        return uses_encoder(self)


def task_config_class(name: str) -> type:
    """The settings class ``tasks/<name>/config.py`` declares (a probe function's: its own module's)."""
    from tasks.registry import available, is_probe_function

    if name not in available():
        raise ConfigError(f"unknown task {name!r} (available: {', '.join(available())})")
    kind = name.removeprefix("probe_")
    module = importlib.import_module(f"tasks.probes.{kind}" if is_probe_function(name) else f"tasks.{name}.config")
    found = [
        c
        for c in vars(module).values()
        if isinstance(c, type)
        and dataclasses.is_dataclass(c)
        and c.__module__ == module.__name__
        and getattr(c, "__dataclass_fields__", {}).get("name") is not None
        and c().name == name
    ]
    if len(found) != 1:
        raise ConfigError(f"{module.__name__} must declare exactly one settings class for task {name!r}")
    return found[0]


def setting_at(run, path: str):
    """The value at a dotted ``path`` of a typed run (``data.test_path``)."""
    node = run
    for part in path.split("."):
        node = getattr(node, part)
    return node


def data_config_class(name: str) -> type:
    """The class of a task's ``data`` group: its settings class's ``DATA`` (a probe's files), else ``DataConfig``."""
    return getattr(task_config_class(name), "DATA", DataConfig)


# ---- a plain configuration as a typed one; the settings that never count -------------------------------


def typed(config: dict):
    """``RunConfig`` of a plain configuration (a composed one, or a record's stored one)."""
    return _typed(json.dumps(config, sort_keys=True, default=str))


@lru_cache(maxsize=1024)
def _typed(text: str):
    return RunConfig.from_resolved(json.loads(text))


def as_run(cfg):
    """A typed ``RunConfig`` of ``cfg``: itself, or a composed ``DictConfig`` or plain mapping built once
    (entry points and tests may hold a composed configuration; the packages below get the typed one)."""
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, RunConfig):
        return cfg
    return typed(OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg))


def _fields_by_role(cls, where: str, counting: bool) -> list[str]:
    out = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("group"):
            if role(f) == COUNTS:
                out += _fields_by_role(type(f.default_factory()), f"{where}{f.name}.", counting)
        elif (role(f) == COUNTS) == counting:
            out.append(f"{where}{f.name}")
    return out


def non_counting_keys() -> list[str]:
    """Every setting that counts in no run's identity (whatever the task, the data's shape or the
    encoder: ``encoder.finetune`` counts for a biLM, so it is not one, though a Transformer ignores it)."""
    from encoders.config import BilmConfig, CacheConfig, TransformerConfig
    from tasks.common.config import DataConfig
    from tasks.registry import available

    groups = [(RunConfig, "")]
    groups += [(cls, "data.") for cls in (DataConfig, TaggedProbeData, SenseProbeData)]
    groups += [(cls, "encoder.") for cls in (BilmConfig, TransformerConfig)] + [(CacheConfig, "cache.")]
    groups += [(task_config_class(name), "task.") for name in available()]
    counting = {k for cls, where in groups for k in _fields_by_role(cls, where, True)}
    keys = [k for cls, where in groups for k in _fields_by_role(cls, where, False)]
    return [k for k in dict.fromkeys(keys) if k not in counting and not k.startswith("embed_sample")]


def run_dir_excludes() -> list[str]:
    """Overrides that do not name a run directory: the task (the directory above it) and every setting
    that does not count in a run's identity (a file-valued one counts by its content instead)."""
    return ["task", *non_counting_keys()]


def evaluate_overrides() -> tuple[str, ...]:
    """What ``mode=evaluate`` takes from its command line over the checkpoint's own settings: the
    data (a test file and how to read it) and where the encoder's files and cache are."""
    return ("data.", *[k for k in non_counting_keys() if k.split(".")[0] in ("encoder", "cache")])
