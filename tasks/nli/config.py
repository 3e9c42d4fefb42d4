"""Entailment (ESIM) settings (appendix A.3; the defaults of
``task=nli``; ``conf/task/nli.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, group, integer, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class NliModelConfig(WordModelConfig):
    hidden: int = setting(300, integer(1))  # every LSTM and feed-forward layer
    dropout: float = setting(0.5, PROBABILITY)


@dataclass(frozen=True)
class NliConfig(TaskConfig):
    name: str = setting("nli", one_of("nli"))
    elmo_position: str = setting("both", one_of("input", "output", "both"))
    model: NliModelConfig = group(NliModelConfig)
