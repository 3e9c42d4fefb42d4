"""Coreference settings (appendix A.6, Lee et al. 2017; the defaults of
``task=coref``; ``conf/task/coref.yaml`` gives its data and profiles)."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import PROBABILITY, group, integer, number, one_of, setting

from ..common.config import TaskConfig, WordModelConfig


@dataclass(frozen=True)
class CorefModelConfig(WordModelConfig):
    word_dim: int = setting(300, integer(1))
    char_dim: int = setting(8, integer(1))
    char_filters: int = setting(50, integer(0))
    hidden: int = setting(200, integer(1))  # BiLSTM units per direction
    ffnn_size: int = setting(150, integer(1))
    ffnn_depth: int = setting(2, integer(1))
    feature_size: int = setting(20, integer(1))
    max_span_width: int = setting(10, integer(1))
    span_ratio: float = setting(0.4, number(0, low_open=True))  # spans kept per word of the document
    max_antecedents: int = setting(250, integer(1))
    lexical_dropout: float = setting(0.5, PROBABILITY)
    dropout: float = setting(0.2, PROBABILITY)
    # pytorch: PyTorch's defaults (N(0, 1) feature embeddings); xavier: allennlp-models' (tasks/coref/model.py)
    weight_init: str = setting("pytorch", one_of("pytorch", "xavier"), added_after_records=True)
    # sentence: the BiLSTM runs over each sentence (Lee et al. 2017); document: over the whole document
    # (or training window) as one sequence, as allennlp-models' coref does
    context: str = setting("sentence", one_of("sentence", "document"), added_after_records=True)


@dataclass(frozen=True)
class CorefConfig(TaskConfig):
    name: str = setting("coref", one_of("coref"))
    elmo_position: str = setting("input", one_of("input", "output", "both"))
    max_training_sentences: int = setting(50, integer(1))  # training documents are cut into windows this long
    model: CorefModelConfig = group(CorefModelConfig)
