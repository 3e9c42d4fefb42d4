"""SQuAD settings (appendix A.4; the defaults of
``task=qa``; ``conf/task/qa.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, group, integer, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class QaModelConfig(WordModelConfig):
    char_dim: int = setting(20, integer(1))
    char_filters: int = setting(100, integer(0))
    char_width: int = setting(5, integer(1))
    hidden: int = setting(90, integer(1))  # GRU size
    linear: int = setting(180, integer(1))
    dropout: float = setting(0.2, PROBABILITY)  # variational, before every GRU and linear layer


@dataclass(frozen=True)
class QaConfig(TaskConfig):
    name: str = setting("qa", one_of("qa"))
    elmo_position: str = setting("both", one_of("input", "output", "both"))
    max_answer_length: int = setting(17, integer(1))  # tokens; best-span decoding bound
    max_tokens_per_batch: int = setting(6000, integer(1))  # padded context tokens per batch
    batching: str = setting("token_capped", one_of("token_capped", "clustered"))
    model: QaModelConfig = group(QaModelConfig)
