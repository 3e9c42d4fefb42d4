"""Sentence classifier for SST (appendix A.8, simplified BCN): x_k (+ ELMo) -> BiLSTM
(-> [h_k; ELMo]) -> max and mean pooling -> two-layer feed-forward network with ReLU and dropout."""

from __future__ import annotations

import torch
from torch import nn

from ..common.layers import TaskModel, TokenEmbedder, VariationalDropout, run_rnn


class SentimentClassifier(TaskModel):
    gold_keys = ("label",)

    def __init__(self, words: list[str], n_classes: int, cfg, features):
        super().__init__()
        m = cfg.model
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.dropout = VariationalDropout(m.dropout)
        self.lstm = nn.LSTM(
            self.embedder.output_dim + features.input_dim, m.hidden, batch_first=True, bidirectional=True
        )
        pooled = 2 * (2 * m.hidden + features.output_dim)
        self.classifier = nn.Sequential(
            nn.Dropout(m.dropout),
            nn.Linear(pooled, m.feedforward),
            nn.ReLU(),
            nn.Dropout(m.dropout),
            nn.Linear(m.feedforward, n_classes),
        )

    def scores(self, batch: dict) -> torch.Tensor:
        """Class logits (batch, classes)."""
        mask = batch["mask"]
        elmo = self.features(batch)
        x = self.features.add_input(self.embedder(batch["word_ids"], batch["char_ids"]), elmo)
        h = self.features.add_output(run_rnn(self.lstm, self.dropout(x), mask), elmo)
        m = mask.unsqueeze(-1)
        max_pool = h.masked_fill(~m, float("-inf")).amax(dim=1)
        mean_pool = (h * m).sum(1) / m.sum(1)
        return self.classifier(torch.cat([max_pool, mean_pool], dim=-1))

    def loss_of(self, logits: torch.Tensor, batch: dict) -> torch.Tensor:
        return nn.functional.cross_entropy(logits, batch["label"])

    def decode(self, logits: torch.Tensor, batch: dict) -> list[int]:
        return logits.argmax(-1).tolist()
