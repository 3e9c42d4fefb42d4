"""NER settings (appendix A.7; the defaults of
``task=ner``; ``conf/task/ner.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, boolean, group, integer, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class NerModelConfig(WordModelConfig):
    word_dim: int = setting(50, integer(1))
    char_filters: int = setting(128, integer(0))
    hidden: list = setting([200, 100])  # BiLSTM sizes, bottom to top
    dropout: float = setting(0.5, PROBABILITY)
    dropout_style: str = setting("variational", one_of("variational", "standard"))
    lowercase_words: bool = setting(False, boolean)
    # training_and_decoding: impossible BIOUL transitions never scored; decoding: Viterbi only (allennlp's CRF)
    crf_constraints: str = setting(
        "training_and_decoding", one_of("training_and_decoding", "decoding"), added_after_records=True
    )
    # mean: the negative log-likelihood averaged over the batch's sentences; sum: summed (allennlp's crf_tagger)
    crf_loss: str = setting("mean", one_of("mean", "sum"), added_after_records=True)


@dataclass(frozen=True)
class NerConfig(TaskConfig):
    name: str = setting("ner", one_of("ner"))
    elmo_position: str = setting("input", one_of("input", "output", "both"))
    model: NerModelConfig = group(NerModelConfig)
