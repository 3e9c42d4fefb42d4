"""Coreference settings (appendix A.6, Lee et al. 2017; the defaults of
``task=coref``; ``conf/task/coref.yaml`` gives its data and profiles)."""

from __future__ import annotations

from typing import Literal

from suite_common.typed_config import Flag, Probability, Text, group, integer, number, setting, settings_group

from ..common.config import TaskConfig, WordModelConfig


@settings_group
class CorefModelConfig(WordModelConfig):
    freeze_vectors: Flag = setting(True)  # appendix A.6 (Lee et al. 2017): fixed GloVe and Turian vectors
    word_dim: integer(1) = setting(300)
    char_dim: integer(1) = setting(8)
    char_filters: integer(0) = setting(50)
    hidden: integer(1) = setting(200)  # BiLSTM units per direction
    ffnn_size: integer(1) = setting(150)
    ffnn_depth: integer(1) = setting(2)
    feature_size: integer(1) = setting(20)
    max_span_width: integer(1) = setting(10)
    span_ratio: number(0, low_open=True) = setting(0.4)  # spans kept per word of the document
    max_antecedents: integer(1) = setting(250)
    lexical_dropout: Probability = setting(0.5)
    dropout: Probability = setting(0.2)
    # pytorch: PyTorch's defaults (N(0, 1) feature embeddings); xavier: allennlp-models' (tasks/coref/model.py)
    weight_init: Literal["pytorch", "xavier"] = setting("pytorch", added_after_records=True)
    # sentence: the BiLSTM runs over each sentence (Lee et al. 2017); document: over the whole document
    # (or training window) as one sequence, as allennlp-models' coref does
    context: Literal["sentence", "document"] = setting("sentence", added_after_records=True)


@settings_group
class CorefConfig(TaskConfig):
    name: Text = setting("coref")
    elmo_position: Literal["input", "output", "both"] = setting("input")
    max_training_sentences: integer(1) = setting(50)  # training documents are cut into windows this long
    model: CorefModelConfig = group(CorefModelConfig)


CONFIG = CorefConfig  # the settings class this task names
