"""Settings every part of the suite must read the same way, each decided here once (Peters et al. 2018
§3.3: where ELMo goes; §3.4: the frozen encoder a run reads):

* ``effective_position`` and ``uses_encoder`` on a plain configuration (a record's): ``elmo.position``
  with ``paper`` meaning the task's own placement, and whether a run reads contextual layers at all
  (a typed run has both as ``RunConfig.position`` and ``RunConfig.reads_encoder``).

What counts in a run's identity is declared by the typed fields themselves (``run_config``).
"""

from __future__ import annotations

import dataclasses


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
