"""SRL settings (appendix A.5; the defaults of
``task=srl``; ``conf/task/srl.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, group, integer, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class SrlModelConfig(WordModelConfig):
    predicate_dim: int = setting(100, integer(1))
    layers: int = setting(8, integer(1))  # interleaved directions
    hidden: int = setting(300, integer(1))
    dropout: float = setting(0.1, PROBABILITY)
    # pytorch: nn.LSTM's U(±1/√hidden); orthogonal: He et al. (2017)'s orthonormal start (tasks/srl/model.py)
    lstm_init: str = setting("pytorch", one_of("pytorch", "orthogonal"), added_after_records=True)
    # output: the gate mixes each nn.LSTM layer's output and input; recurrent: He et al.'s cell (tasks/srl/model.py)
    highway: str = setting("output", one_of("output", "recurrent"), added_after_records=True)


@dataclass(frozen=True)
class SrlConfig(TaskConfig):
    name: str = setting("srl", one_of("srl"))
    elmo_position: str = setting("input", one_of("input", "output", "both"))
    model: SrlModelConfig = group(SrlModelConfig)
