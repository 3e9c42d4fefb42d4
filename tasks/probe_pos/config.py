"""The POS layer probe's settings (§5.3): a linear classifier on one layer at a time, nothing to size."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import one_of, setting


@dataclass(frozen=True)
class ProbePosConfig:
    name: str = setting("probe_pos", one_of("probe_pos"))
    elmo_position: str = setting("probe", one_of("probe"))
