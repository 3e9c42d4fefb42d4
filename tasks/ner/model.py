"""The paper's NER baseline (appendix A.7): word embeddings + character CNN -> stacked BiLSTMs ->
dense -> CRF with constrained decoding over BIOUL tags. ELMo is concatenated with x_k at the input
of the lowest BiLSTM and/or with h_k at the output of the top one (§3.3)."""
from __future__ import annotations

import torch
from torch import nn

from ..layers import TokenEmbedder, VariationalDropout, run_rnn
from .crf import ConstrainedCRF


class NerTagger(nn.Module):
    def __init__(self, words: list[str], labels: list[str], cfg, features):
        super().__init__()
        m = cfg.model
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.dropout = VariationalDropout(m.dropout)
        dims = [self.embedder.output_dim + features.input_dim] + [2 * h for h in m.hidden]
        self.lstms = nn.ModuleList(nn.LSTM(dims[i], h, batch_first=True, bidirectional=True)
                                   for i, h in enumerate(m.hidden))
        self.output = nn.Linear(dims[-1] + features.output_dim, len(labels))
        self.crf = ConstrainedCRF(labels)

    def emissions(self, batch: dict, elmo: dict) -> torch.Tensor:
        x = self.embedder(batch["word_ids"], batch["char_ids"])
        if "input" in elmo:
            x = torch.cat([x, elmo["input"]], dim=-1)
        for lstm in self.lstms:
            x = run_rnn(lstm, self.dropout(x), batch["mask"])
        if "output" in elmo:
            x = torch.cat([x, elmo["output"]], dim=-1)
        return self.output(self.dropout(x))

    def loss(self, batch: dict, elmo: dict) -> torch.Tensor:
        return -self.crf(self.emissions(batch, elmo), batch["tags"], batch["mask"], reduction="mean")

    def decode(self, batch: dict, elmo: dict) -> list[list[int]]:
        return self.crf.decode(self.emissions(batch, elmo), batch["mask"])
