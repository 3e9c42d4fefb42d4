"""BERT beside ELMo (Devlin et al. 2019, as our sources explain it next to Peters et al. 2018):
WordPiece pieces with [CLS]/[SEP], token + segment + learned position embeddings, a Transformer
encoder, pretrained by masked LM (15 % of the pieces; 80 % of those replaced by [MASK], 10 % by a
random piece, 10 % unchanged) and next-sentence prediction on [CLS].

* ``pretraining_data``: sentence-pair instances for MLM + NSP from a corpus of files, streamed.
* ``bert_pretrain``: ``python -m bert_core.bert_pretrain`` (WordPiece vocabulary with ``tokenizers``,
  ``transformers``' ``BertForPreTraining``, exact resume, held-out MLM and NSP accuracy).
* ``word_layers``: any frozen Transformer as the suite's layer source: words -> pieces -> one vector
  per word and layer (embeddings + every hidden layer), long inputs in overlapping windows.
* ``pretrained/``: the embedded small BERT.

Depends on torch, numpy, ``transformers`` and ``tokenizers`` (and ``elmo_core``'s corpus reader).
"""

from suite_common.errors import EncoderError

__all__ = ["EncoderError"]
