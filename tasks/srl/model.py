"""The paper's SRL model, a re-implementation of He et al. (2017) (appendix A.5): word embedding +
predicate-indicator embedding (+ ELMo) -> deep BiLSTM with interleaved directions (layer l reads
left-to-right when l is even, right-to-left when odd) and highway connections between layers ->
per-token tag scores; decoding is BIO-constrained Viterbi. With ``highway=output`` (nn.LSTM, fast) the
gate mixes each layer's output with its input, and He et al.'s recurrent (hidden-to-hidden) dropout is
approximated by variational dropout on every layer's input; ``highway=recurrent`` is He et al.'s own
cell (``RecurrentHighwayLayer``). ``lstm_init=orthogonal`` starts every weight matrix of the BiLSTM and of the output
layer as a random orthonormal matrix, one block per gate, with the forget gates' bias at 1 (appendix
A.5, after He et al. 2017; allennlp's ``AugmentedLstm``, which allennlp-models' SRL tagger stacks, does
the same); ``pytorch`` keeps ``nn.LSTM``'s U(±1/√hidden)."""

from __future__ import annotations

import torch
from torch import nn

from elmo_core.bilm import reverse_padded

from ..common import layers as task_layers
from ..common.layers import TaskModel, TokenEmbedder, VariationalDropout, run_rnn
from .decode import bio_constraints, viterbi


def block_orthogonal_(weight: torch.Tensor, rows: int, columns: int) -> None:
    """Each (rows, columns) block of ``weight`` becomes an independent random orthonormal matrix."""
    with torch.no_grad():
        for i in range(0, weight.shape[0], rows):
            for j in range(0, weight.shape[1], columns):
                block = weight[i : i + rows, j : j + columns]
                block.copy_(nn.init.orthogonal_(torch.empty_like(block)))


class HighwayLSTMLayer(nn.Module):
    def __init__(self, input_dim: int, hidden: int, reverse: bool):
        super().__init__()
        self.reverse = reverse
        self.lstm = nn.LSTM(input_dim, hidden, batch_first=True)
        self.gate = nn.Linear(input_dim + hidden, hidden)
        self.carry = nn.Linear(input_dim, hidden, bias=False) if input_dim != hidden else nn.Identity()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = task_layers.host_lengths(mask)
        h = run_rnn(self.lstm, reverse_padded(x, lengths) if self.reverse else x, mask)
        if self.reverse:
            h = reverse_padded(h, lengths)
        g = torch.sigmoid(self.gate(torch.cat([x, h], dim=-1)))
        return g * h + (1 - g) * self.carry(x)

    def orthogonal_init(self) -> None:
        """He et al.'s start: orthonormal blocks (one per gate, input and state apart), biases at zero
        but the forget gates' at 1."""
        hidden, inputs = self.lstm.hidden_size, self.lstm.input_size
        block_orthogonal_(self.lstm.weight_ih_l0, hidden, inputs)
        block_orthogonal_(self.lstm.weight_hh_l0, hidden, hidden)
        block_orthogonal_(self.gate.weight[:, :inputs], hidden, inputs)  # the gate reads (x | h)
        block_orthogonal_(self.gate.weight[:, inputs:], hidden, hidden)
        if isinstance(self.carry, nn.Linear):
            block_orthogonal_(self.carry.weight, hidden, inputs)
        with torch.no_grad():
            self.lstm.bias_ih_l0.zero_()
            self.lstm.bias_hh_l0.zero_()
            self.lstm.bias_hh_l0[hidden : 2 * hidden].fill_(1.0)  # PyTorch's gate order: i, f, g, o
            self.gate.bias.zero_()


class RecurrentHighwayLayer(nn.Module):
    """He et al. (2017)'s layer (``highway=recurrent``): an LSTM whose highway gate sits inside the
    recurrence, reading x(t) and h(t-1), and whose gated output is the next step's state; recurrent dropout
    is one mask per sequence on h(t-1). A loop over time steps (no fused kernel has this cell)."""

    def __init__(self, input_dim: int, hidden: int, reverse: bool, recurrent_dropout: float):
        super().__init__()
        self.reverse, self.hidden, self.recurrent_dropout = reverse, hidden, recurrent_dropout
        self.input_linearity = nn.Linear(input_dim, 6 * hidden)  # gates i, f, g, o, r and the carried x
        self.state_linearity = nn.Linear(hidden, 5 * hidden)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Rows sorted longest first, so the sequences still running at step t are the first ``active[t]``:
        each step computes those rows only (a batch is never run to its longest sentence for every row)."""
        lengths = task_layers.host_lengths(mask)
        if self.reverse:
            x = reverse_padded(x, lengths)
        hidden, batch = self.hidden, x.shape[0]
        keep = None
        if self.training and self.recurrent_dropout > 0:
            keep = x.new_empty(batch, hidden).bernoulli_(1 - self.recurrent_dropout) / (1 - self.recurrent_dropout)
        order = torch.argsort(lengths, descending=True, stable=True)
        active = (lengths[order].unsqueeze(0) > torch.arange(x.shape[1]).unsqueeze(1)).sum(1).tolist()  # (T,)
        order_on = order.to(x.device)
        sorted_mask = mask[order_on]
        # gates i, f, g, o, r and the carried x of the words only (never of padding), then one tensor per step
        projected = x.new_zeros(*sorted_mask.shape, 6 * hidden).masked_scatter(
            sorted_mask.unsqueeze(-1), self.input_linearity(x[order_on][sorted_mask])
        )
        projected = projected.unbind(1)
        keep = None if keep is None else keep[order_on]
        h = c = x.new_zeros(batch, hidden)
        steps = []
        for t, n in enumerate(active):  # padding comes after each sequence's last word, so it never reaches one
            if n == 0:
                break
            h, c, step = h[:n], c[:n], projected[t][:n]
            gates = step[:, : 5 * hidden] + self.state_linearity(h if keep is None else h * keep[:n])
            i, f, g, o, r = gates.chunk(5, dim=1)
            c = torch.sigmoid(i) * torch.tanh(g) + torch.sigmoid(f) * c
            r = torch.sigmoid(r)
            h = r * torch.sigmoid(o) * torch.tanh(c) + (1 - r) * step[:, 5 * hidden :]
            steps.append(nn.functional.pad(h, (0, 0, 0, batch - n)))
        out = torch.stack(steps, dim=1) if steps else x.new_zeros(batch, 0, hidden)
        out = nn.functional.pad(out, (0, 0, 0, x.shape[1] - out.shape[1]))[torch.argsort(order_on)]
        return reverse_padded(out, lengths) if self.reverse else out

    def orthogonal_init(self) -> None:
        """As ``HighwayLSTMLayer.orthogonal_init``: orthonormal blocks, biases at zero but the forget gates' at 1."""
        hidden, inputs = self.hidden, self.input_linearity.in_features
        block_orthogonal_(self.input_linearity.weight, hidden, inputs)
        block_orthogonal_(self.state_linearity.weight, hidden, hidden)
        with torch.no_grad():
            self.input_linearity.bias.zero_()
            self.state_linearity.bias.zero_()
            self.state_linearity.bias[hidden : 2 * hidden].fill_(1.0)


class SrlTagger(TaskModel):
    gold_keys = ("tags",)

    def __init__(self, words: list[str], labels: list[str], cfg, features):
        super().__init__()
        self.constraints = bio_constraints(labels)  # the BIO transitions Viterbi may take
        m = cfg.model
        self.features = features
        self.embedder = TokenEmbedder.from_config(words, m)
        self.predicate = nn.Embedding(2, m.predicate_dim)
        self.dropout = VariationalDropout(m.dropout)
        dim = self.embedder.output_dim + m.predicate_dim + features.input_dim
        self.layers = nn.ModuleList()
        self.recurrent_highway = m.highway == "recurrent"
        for layer in range(m.layers):
            if self.recurrent_highway:
                self.layers.append(RecurrentHighwayLayer(dim, m.hidden, layer % 2 == 1, m.dropout))
            else:
                self.layers.append(HighwayLSTMLayer(dim, m.hidden, reverse=layer % 2 == 1))
            dim = m.hidden
        self.output = nn.Linear(dim + features.output_dim, len(labels))
        if m.lstm_init == "orthogonal":
            for layer in self.layers:
                layer.orthogonal_init()
            nn.init.orthogonal_(self.output.weight)

    def scores(self, batch: dict) -> torch.Tensor:
        """Tag scores (batch, words, tags)."""
        elmo = self.features(batch)
        x = torch.cat([self.embedder(batch["word_ids"], batch["char_ids"]), self.predicate(batch["is_predicate"])], -1)
        x = self.features.add_input(x, elmo)
        for depth, layer in enumerate(self.layers):  # recurrent highway: dropout on the embeddings, then within
            x = layer(self.dropout(x) if depth == 0 or not self.recurrent_highway else x, batch["mask"])
        return self.output(self.features.add_output(x, elmo))

    def loss_of(self, logits: torch.Tensor, batch: dict) -> torch.Tensor:
        mask = batch["mask"]
        return nn.functional.cross_entropy(logits[mask], batch["tags"][mask])

    def decode(self, logits: torch.Tensor, batch: dict) -> list[list[int]]:
        """The best BIO-valid tag sequence of each example (tag indices), by Viterbi."""
        log_probs = torch.log_softmax(logits, dim=-1)
        lengths = batch["mask"].sum(1).tolist()
        return [viterbi(log_probs[i, :n], *self.constraints) for i, n in enumerate(lengths)]
