"""ESIM (Chen et al. 2017), the paper's SNLI baseline (appendix A.3): input encoder BiLSTM ->
soft alignment of premise and hypothesis -> enhancement [a; ã; a−ã; a⊙ã] -> projection (ReLU) ->
composition BiLSTM -> mean and max pooling of both -> feed-forward classifier. ELMo goes at the
input and/or the output of the lowest (input-encoder) BiLSTM; premise and hypothesis share the mixes."""

from __future__ import annotations

import torch
from torch import nn

from ..common.layers import TaskModel, TokenEmbedder, VariationalDropout, run_rnn


class Esim(TaskModel):
    gold_keys = ("label",)

    def __init__(self, words: list[str], n_classes: int, cfg, features):
        super().__init__()
        m = cfg.model
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.drop = VariationalDropout(m.dropout)
        h = m.hidden
        self.encoder = nn.LSTM(self.embedder.output_dim + features.input_dim, h, batch_first=True, bidirectional=True)
        enc = 2 * h + features.output_dim
        self.projection = nn.Sequential(nn.Linear(4 * enc, h), nn.ReLU())
        self.composition = nn.LSTM(h, h, batch_first=True, bidirectional=True)
        self.classifier = nn.Sequential(
            nn.Dropout(m.dropout), nn.Linear(8 * h, h), nn.ReLU(), nn.Dropout(m.dropout), nn.Linear(h, n_classes)
        )

    def encode(self, side: dict, elmo: dict) -> torch.Tensor:
        x = self.features.add_input(self.embedder(side["word_ids"], side["char_ids"]), elmo)
        return self.features.add_output(run_rnn(self.encoder, self.drop(x), side["mask"]), elmo)

    @staticmethod
    def pool(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1)
        return torch.cat([(x * m).sum(1) / m.sum(1), x.masked_fill(~m, float("-inf")).amax(1)], dim=-1)

    def scores(self, batch: dict) -> torch.Tensor:
        """Class logits (batch, classes)."""
        # shapes: B pairs, n premise words, m hypothesis words, e = 2·hidden (+ ELMo at the output), h = hidden
        pm, hm = batch["premise"]["mask"], batch["hypothesis"]["mask"]  # (B, n), (B, m)
        elmo = {side: self.features(batch[side]) for side in ("premise", "hypothesis")}  # the mixes first
        a = self.encode(batch["premise"], elmo["premise"])  # (B, n, e)
        b = self.encode(batch["hypothesis"], elmo["hypothesis"])  # (B, m, e)
        e = a @ b.transpose(1, 2)  # (B, n, m): premise word i against hypothesis word j
        a_tilde = torch.softmax(e.masked_fill(~hm.unsqueeze(1), float("-inf")), dim=2) @ b  # (B, n, e)
        b_tilde = torch.softmax(e.masked_fill(~pm.unsqueeze(2), float("-inf")), dim=1).transpose(1, 2) @ a  # (B, m, e)
        ma = self.projection(self.drop(torch.cat([a, a_tilde, a - a_tilde, a * a_tilde], -1)))  # (B, n, h)
        mb = self.projection(self.drop(torch.cat([b, b_tilde, b - b_tilde, b * b_tilde], -1)))  # (B, m, h)
        va, vb = (
            run_rnn(self.composition, self.drop(ma), pm),
            run_rnn(self.composition, self.drop(mb), hm),
        )  # (B, ·, 2h)
        return self.classifier(torch.cat([self.pool(va, pm), self.pool(vb, hm)], dim=-1))  # (B, classes)

    def loss_of(self, logits: torch.Tensor, batch: dict) -> torch.Tensor:
        return nn.functional.cross_entropy(logits, batch["label"])

    def decode(self, logits: torch.Tensor, batch: dict) -> list[int]:
        return logits.argmax(-1).tolist()
