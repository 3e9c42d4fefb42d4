"""NER settings (appendix A.7; the defaults of
``task=ner``; ``conf/task/ner.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class NerModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(False)  # appendix A.7: 50-d Senna vectors, fine-tuned
    word_dim: integer(1) = setting(50)
    char_filters: integer(0) = setting(128)
    hidden: list[integer(1)] = setting([200, 100])  # BiLSTM sizes, bottom to top
    dropout: Probability = setting(0.5)
    dropout_style: Literal["variational", "standard"] = setting("variational")
    lowercase_words: Flag = setting(False)
    # training_and_decoding: impossible BIOUL transitions never scored; decoding: Viterbi only (allennlp's CRF)
    crf_constraints: Literal["training_and_decoding", "decoding"] = setting(
        "training_and_decoding", added_after_records=True
    )
    # mean: the negative log-likelihood averaged over the batch's sentences; sum: summed (allennlp's crf_tagger)
    crf_loss: Literal["mean", "sum"] = setting("mean", added_after_records=True)


@settings_group
class NerConfig(TaskConfig):
    name: Text = setting("ner")
    elmo_position: Literal["input", "output", "both"] = setting("input")
    model: NerModelConfig = group(NerModelConfig)


CONFIG = NerConfig  # the settings class this task names
