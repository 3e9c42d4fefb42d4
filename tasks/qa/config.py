"""SQuAD settings (appendix A.4; the defaults of
``task=qa``; ``conf/task/qa.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class QaModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(True)  # appendix A.4: case-sensitive 300-d GloVe, frozen
    char_dim: integer(1) = setting(20)
    char_filters: integer(0) = setting(100)
    char_width: integer(1) = setting(5)
    hidden: integer(1) = setting(90)  # GRU size
    linear: integer(1) = setting(180)
    dropout: Probability = setting(0.2)  # variational, before every GRU and linear layer


@settings_group
class QaConfig(TaskConfig):
    name: Text = setting("qa")
    elmo_position: Literal["input", "output", "both"] = setting("both")
    max_answer_length: integer(1) = setting(17)  # tokens; best-span decoding bound
    max_tokens_per_batch: integer(1) = setting(6000)  # padded context tokens per batch
    batching: Literal["token_capped", "clustered"] = setting("token_capped")
    model: QaModelConfig = group(QaModelConfig)


CONFIG = QaConfig  # the settings class this task names
