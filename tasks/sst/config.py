"""SST-5 settings (appendix A.8; the defaults of
``task=sst``; ``conf/task/sst.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, group, integer, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class SstModelConfig(WordModelConfig):
    char_filters: int = setting(64, integer(0))
    hidden: int = setting(150, integer(1))
    feedforward: int = setting(150, integer(1))
    dropout: float = setting(0.3, PROBABILITY)


@dataclass(frozen=True)
class SstConfig(TaskConfig):
    name: str = setting("sst", one_of("sst"))
    elmo_position: str = setting("both", one_of("input", "output", "both"))
    binary: bool = setting(False, lambda v: None if isinstance(v, bool) else "must be true or false")
    phrases_min_tokens: int | None = setting(None, integer(1, optional=True))  # also train on phrases this long
    model: SstModelConfig = group(SstModelConfig)
