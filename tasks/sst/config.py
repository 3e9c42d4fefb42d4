"""SST-5 settings (appendix A.8; the defaults of
``task=sst``; ``conf/task/sst.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class SstModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(True)  # appendix A.8 (BCN, McCann et al. 2017): GloVe 840B 300-d, frozen
    char_filters: integer(0) = setting(64)
    hidden: integer(1) = setting(150)
    feedforward: integer(1) = setting(150)
    dropout: Probability = setting(0.3)


@settings_group
class SstConfig(TaskConfig):
    name: Text = setting("sst")
    elmo_position: Literal["input", "output", "both"] = setting("both")
    binary: Flag = setting(False)
    phrases_min_tokens: integer(1) | None = setting(None)  # also train on phrases this long
    model: SstModelConfig = group(SstModelConfig)


CONFIG = SstConfig  # the settings class this task names
