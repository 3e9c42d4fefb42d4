"""The paper's NER baseline (appendix A.7): word embeddings + character CNN -> stacked BiLSTMs ->
dense -> CRF with constrained decoding over BIOUL tags. ELMo is concatenated with x_k at the input
of the lowest BiLSTM and/or with h_k at the output of the top one (§3.3)."""

from __future__ import annotations

import torch
from torch import nn

from ..common.layers import TaskModel, TokenEmbedder, run_rnn, sequence_dropout
from .crf import ConstrainedCRF


class NerTagger(TaskModel):
    gold_keys = ("tags",)

    def __init__(self, words: list[str], labels: list[str], cfg, features):
        super().__init__()
        m = cfg.model
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.dropout = sequence_dropout(m.dropout, m.dropout_style)
        dims = [self.embedder.output_dim + features.input_dim] + [2 * h for h in m.hidden]
        self.lstms = nn.ModuleList(
            nn.LSTM(dims[i], h, batch_first=True, bidirectional=True) for i, h in enumerate(m.hidden)
        )
        self.output = nn.Linear(dims[-1] + features.output_dim, len(labels))
        self.crf = ConstrainedCRF(labels, constrain_training=m.crf_constraints == "training_and_decoding")
        self.loss_reduction = m.crf_loss  # mean: over the batch's sentences; sum: allennlp's crf_tagger

    def scores(self, batch: dict) -> torch.Tensor:
        """The CRF's emissions (batch, words, tags)."""
        elmo = self.features(batch)
        x = self.features.add_input(self.embedder(batch["word_ids"], batch["char_ids"]), elmo)
        for lstm in self.lstms:
            x = run_rnn(lstm, self.dropout(x), batch["mask"])
        return self.output(self.dropout(self.features.add_output(x, elmo)))

    def loss_of(self, emissions: torch.Tensor, batch: dict) -> torch.Tensor:
        return -self.crf(emissions, batch["tags"], batch["mask"], reduction=self.loss_reduction)

    def decode(self, emissions: torch.Tensor, batch: dict) -> list[list[int]]:
        """The best tag sequence of each sentence under the BIOUL constraints (tag indices)."""
        return self.crf.decode(emissions, batch["mask"])
