"""SRL settings (appendix A.5; the defaults of
``task=srl``; ``conf/task/srl.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class SrlModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(False)  # appendix A.5: 100-d GloVe, fine-tuned
    predicate_dim: integer(1) = setting(100)
    layers: integer(1) = setting(8)  # interleaved directions
    hidden: integer(1) = setting(300)
    dropout: Probability = setting(0.1)
    # pytorch: nn.LSTM's U(±1/√hidden); orthogonal: He et al. (2017)'s orthonormal start (tasks/srl/model.py)
    lstm_init: Literal["pytorch", "orthogonal"] = setting("pytorch", added_after_records=True)
    # output: the gate mixes each nn.LSTM layer's output and input; recurrent: He et al.'s cell (tasks/srl/model.py)
    highway: Literal["output", "recurrent"] = setting("output", added_after_records=True)


@settings_group
class SrlConfig(TaskConfig):
    name: Text = setting("srl")
    elmo_position: Literal["input", "output", "both"] = setting("input")
    model: SrlModelConfig = group(SrlModelConfig)


CONFIG = SrlConfig  # the settings class this task names
