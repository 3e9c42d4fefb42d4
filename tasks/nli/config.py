"""Entailment (ESIM) settings (appendix A.3; the defaults of
``task=nli``; ``conf/task/nli.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class NliModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(True)  # appendix A.3: GloVe 300-d, frozen
    hidden: integer(1) = setting(300)  # every LSTM and feed-forward layer
    dropout: Probability = setting(0.5)


@settings_group
class NliConfig(TaskConfig):
    name: Text = setting("nli")
    elmo_position: Literal["input", "output", "both"] = setting("both")
    model: NliModelConfig = group(NliModelConfig)


CONFIG = NliConfig  # the settings class this task names
