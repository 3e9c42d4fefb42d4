"""The paper's SQuAD baseline (appendix A.4): a simplified Clark & Gardner (2017) BiDAF with
self-attention and GRUs. Token representation (word embedding + character CNN, + ELMo at the
input) -> shared contextual BiGRU -> bi-attention (context-to-query and query-to-context) ->
linear+ReLU -> residual self-attention block (BiGRU, context-to-context attention with the diagonal
masked, linear+ReLU) -> start BiGRU -> start scores; end BiGRU over [start states; modelled
context] -> end scores, so the end is conditioned on the start.

ELMo at the output (§3.3) is concatenated with the contextual BiGRU's output, before the
attention, for both context and question (the same mixes serve both, as in the original code).
Variational dropout precedes every GRU and linear layer."""

from __future__ import annotations

import torch
from torch import nn

from ..common.layers import TaskModel, TokenEmbedder, VariationalDropout, run_rnn

NEG = -1e30


class Trilinear(nn.Module):
    """S_ij = w1·a_i + w2·b_j + w3·(a_i ⊙ b_j)."""

    def __init__(self, dim: int):
        super().__init__()
        self.w1, self.w2 = nn.Linear(dim, 1), nn.Linear(dim, 1, bias=False)
        self.w3 = nn.Parameter(torch.empty(dim).uniform_(-0.1, 0.1))

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # (B, n, d), (B, m, d) -> (B, n, m)
        return self.w1(a) + self.w2(b).transpose(1, 2) + (a * self.w3) @ b.transpose(1, 2)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~mask, NEG), dim=dim)


class BiGRU(nn.Module):
    def __init__(self, input_dim: int, hidden: int):
        super().__init__()
        self.gru = nn.GRU(input_dim, hidden, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return run_rnn(self.gru, x, mask)


class BidafQA(TaskModel):
    gold_keys = ("start", "end")

    def __init__(self, words: list[str], cfg, features):
        super().__init__()
        m = cfg.model
        self.max_answer_length = cfg.max_answer_length  # words of the longest span decoding may return
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.drop = VariationalDropout(m.dropout)
        d, lin = m.hidden, m.linear
        self.encoder = BiGRU(self.embedder.output_dim + features.input_dim, d)
        enc = 2 * d + features.output_dim
        self.attention = Trilinear(enc)
        self.attention_out = nn.Linear(4 * enc, lin)
        self.self_gru = BiGRU(lin, d)
        self.self_attention = Trilinear(2 * d)
        self.self_out = nn.Linear(6 * d, lin)
        self.start_gru, self.start = BiGRU(lin, d), nn.Linear(2 * d + lin, 1)
        self.end_gru, self.end = BiGRU(2 * d + lin, d), nn.Linear(2 * d + lin, 1)

    def encode(self, side: dict, elmo: dict) -> torch.Tensor:
        x = self.features.add_input(self.embedder(side["word_ids"], side["char_ids"]), elmo)
        return self.features.add_output(self.encoder(self.drop(x), side["mask"]), elmo)

    def scores(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end scores over the context words, (batch, passage) each."""
        # shapes: B questions, n passage (context) words, m question words, e = 2·hidden (+ ELMo at the
        # output), d = hidden, l = the linear layers' width
        cm, qm = batch["context"]["mask"], batch["question"]["mask"]  # (B, n), (B, m)
        elmo = {side: self.features(batch[side]) for side in ("context", "question")}  # the mixes first
        c = self.encode(batch["context"], elmo["context"])  # (B, n, e)
        q = self.encode(batch["question"], elmo["question"])  # (B, m, e)
        s = self.attention(self.drop(c), self.drop(q))  # (B, n, m): passage word i against question word j
        c2q = masked_softmax(s, qm.unsqueeze(1), dim=2) @ q  # (B, n, e): the question as each passage word reads it
        q2c_weights = masked_softmax(s.masked_fill(~qm.unsqueeze(1), NEG).amax(dim=2), cm, dim=1)  # (B, n)
        q2c = (q2c_weights.unsqueeze(1) @ c).expand_as(c)  # (B, n, e): one passage summary, repeated
        g = torch.relu(self.attention_out(self.drop(torch.cat([c, c2q, c * c2q, c * q2c], dim=-1))))  # (B, n, l)
        h = self.self_gru(self.drop(g), cm)  # (B, n, 2d)
        ss = self.self_attention(self.drop(h), self.drop(h))  # (B, n, n): passage against itself
        eye = torch.eye(ss.shape[1], dtype=torch.bool, device=ss.device).unsqueeze(0)  # (1, n, n)
        att = masked_softmax(ss.masked_fill(eye, NEG), cm.unsqueeze(1), dim=2) @ h  # (B, n, 2d), not from itself
        g = g + torch.relu(self.self_out(self.drop(torch.cat([h, att, h * att], dim=-1))))  # (B, n, l)
        start_states = self.start_gru(self.drop(g), cm)  # (B, n, 2d)
        start = self.start(self.drop(torch.cat([start_states, g], -1))).squeeze(-1)  # (B, n)
        end_states = self.end_gru(self.drop(torch.cat([start_states, g], -1)), cm)  # (B, n, 2d)
        end = self.end(self.drop(torch.cat([end_states, g], -1))).squeeze(-1)  # (B, n)
        return start.masked_fill(~cm, NEG), end.masked_fill(~cm, NEG)

    def loss_of(self, scores: tuple[torch.Tensor, torch.Tensor], batch: dict) -> torch.Tensor:
        start, end = scores
        return nn.functional.cross_entropy(start, batch["start"]) + nn.functional.cross_entropy(end, batch["end"])

    def decode(self, scores: tuple[torch.Tensor, torch.Tensor], batch: dict) -> list[tuple[int, int]]:
        """The best (start, end) word span of each question, at most ``max_answer_length`` words."""
        return best_spans(*scores, self.max_answer_length)


def best_spans(start: torch.Tensor, end: torch.Tensor, max_length: int) -> list[tuple[int, int]]:
    """argmax over start <= end < start + max_length of start_i + end_j, per example."""
    n = start.shape[1]
    scores = start.unsqueeze(2) + end.unsqueeze(1)  # (B, i, j)
    band = torch.ones(n, n, dtype=torch.bool, device=start.device).triu().tril(max_length - 1)
    flat = scores.masked_fill(~band, NEG).view(start.shape[0], -1).argmax(dim=1)
    return [(int(k) // n, int(k) % n) for k in flat]
