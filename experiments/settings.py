"""Settings every part of the suite must read the same way, each decided here once (Peters et al. 2018
§3.3: where ELMo goes; §3.4: the frozen encoder a run reads):

* ``typed``: a plain configuration (composed, or a record's stored one) as a ``RunConfig``;
* ``effective_position`` and ``uses_encoder`` on a plain configuration (a record's): ``elmo.position``
  with ``paper`` meaning the task's own placement, and whether a run reads contextual layers at all;
* ``ElmoSettings``: both of those and how the mixes are made, as a run's plan holds them;
* ``run_dir_excludes`` (Hydra's ``override_dirname.exclude_keys``) and ``evaluate_overrides``: the
  settings that do not count in a run's identity, read from the typed fields' own declarations.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache

from suite_common.typed_config import COUNTS, role


def typed(config: dict):
    """``RunConfig`` of a plain configuration (a composed one, or a record's stored one)."""
    return _typed(json.dumps(config, sort_keys=True, default=str))


@lru_cache(maxsize=1024)
def _typed(text: str):
    from .run_config import RunConfig

    return RunConfig.from_resolved(json.loads(text))


def as_run(cfg):
    """A typed ``RunConfig`` of ``cfg``: itself, or a composed ``DictConfig`` or plain mapping built once
    (entry points and tests may hold a composed configuration; the packages below get the typed one)."""
    from omegaconf import DictConfig, OmegaConf

    from .run_config import RunConfig

    if isinstance(cfg, RunConfig):
        return cfg
    return typed(OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg))


def _get(node, key: str, default=None):
    """A setting of a plain configuration or of a typed one."""
    if node is None:
        return default
    return getattr(node, key, default) if dataclasses.is_dataclass(node) else node.get(key, default)


def effective_position(config) -> str | None:
    """Where ELMo goes in this run (a plain or a typed configuration): ``none | input | output | both | probe``."""
    elmo, task = _get(config, "elmo") or {}, _get(config, "task") or {}
    position = _get(elmo, "position")
    return _get(task, "elmo_position") if position == "paper" else position


def uses_encoder(config) -> bool:
    """Whether the run reads contextual layers (ELMo at some position, a probe, or biLM fine-tuning)."""
    name = str(_get(_get(config, "task") or {}, "name", ""))
    return name.startswith("probe_") or _get(config, "mode") == "finetune" or effective_position(config) != "none"


@dataclass(frozen=True)
class ElmoSettings:
    """How one run uses ELMo (§3.2-3.3): where the mixes go (``position``), whether it reads an
    encoder's layers at all (``reads_encoder``), and how each mix is made (``mix``, ``dropout``,
    ``layer_norm``, ``l2``), read from a typed run configuration."""

    position: str | None  # none | input | output | both | probe
    reads_encoder: bool
    mix: str  # all | last | average
    dropout: float
    layer_norm: bool
    l2: float

    @classmethod
    def of(cls, run) -> ElmoSettings:
        run = as_run(run)
        return cls(
            position=run.position,
            reads_encoder=run.reads_encoder,
            mix=run.elmo.mix,
            dropout=float(run.elmo.dropout),
            layer_norm=bool(run.elmo.layer_norm),
            l2=float(run.elmo.l2),
        )


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
    from tasks.common.config import DataConfig, SenseProbeData, TaggedProbeData
    from tasks.registry import available

    from .run_config import RunConfig, task_config_class

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
