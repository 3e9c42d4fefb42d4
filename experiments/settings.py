"""Settings every part of the suite must read the same way, each decided here once (Peters et al. 2018
§3.3: where ELMo goes; §3.4: the frozen encoder a run reads):

* ``effective_position`` and ``uses_encoder`` on a plain configuration (a record's): ``elmo.position``
  with ``paper`` meaning the task's own placement, and whether a run reads contextual layers at all;
* ``ElmoSettings``: both of those and how the mixes are made, as a run's plan holds them.

What counts in a run's identity is declared by the typed fields themselves (``run_config``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


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
        """From a typed run configuration (``run_config.RunConfig``)."""
        return cls(
            position=run.position,
            reads_encoder=run.reads_encoder,
            mix=run.elmo.mix,
            dropout=float(run.elmo.dropout),
            layer_norm=bool(run.elmo.layer_norm),
            l2=float(run.elmo.l2),
        )
