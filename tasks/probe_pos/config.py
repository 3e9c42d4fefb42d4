"""The POS layer probe's settings (§5.3): a linear classifier on one layer at a time, nothing to size."""

from __future__ import annotations

from typing import ClassVar, Literal

from suite_common.typed_config import Text, setting, settings_group

from ..common.config import TaggedProbeData


@settings_group
class ProbePosConfig:
    DATA: ClassVar[type] = TaggedProbeData  # its data group's class
    name: Text = setting("probe_pos")
    elmo_position: Literal["probe"] = setting("probe")


CONFIG = ProbePosConfig  # the settings class this task names
