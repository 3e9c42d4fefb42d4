"""Building blocks shared by the task models (Peters et al. 2018 §3.3 and appendix A):
the context-independent token representation x_k (word embedding + character CNN), variational
dropout, and the ELMo mixes placed at the input and/or output of the task encoder (``ElmoFeatures``,
applied by each model inside its own ``forward``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from elmo_core import Elmo
from elmo_core.characters import N_CHARACTERS
from static_vectors.store import rows_for
from suite_common.errors import ConfigError

POSITIONS = ("none", "input", "output", "both", "probe")  # probe: one mix, read by a layer probe (§5.3)


# The steps of a forward pass whose shapes depend on the values of the data: they read tensors on
# the host (a device sync on a GPU), so a device without data (PyTorch's ``meta``) cannot run them.
# Each is a function of its own, tested on the CPU, and replaced by a shape-alike stand-in where
# tests/tasks/test_meta_device.py runs every model on ``meta`` to catch tensors made on the wrong device.
# Decoding (``TaskModel.decode``: Viterbi, argmax lists, span pruning) is data-dependent as a whole.
DATA_DEPENDENT = ("run_rnn", "host_lengths", "distinct_rows")  # run_rnn: packing reads the lengths


def host_lengths(mask: torch.Tensor) -> torch.Tensor:
    """The length of each sequence of a (B, T) mask, on the CPU, as ``pack_padded_sequence`` needs."""
    return mask.sum(1).cpu()


def rows_at(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``x[index]`` for an integer ``index`` of any shape, through ``index_select``: its backward adds the
    gradients of repeated rows in a fixed order, where indexing's does not on two or more CPU threads (a run
    there would not repeat bit for bit); on one thread the two give the same numbers."""
    return x.index_select(0, index.reshape(-1)).view(*index.shape, *x.shape[1:])


def distinct_rows(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of a (N, C) tensor and, for each row, the index of its distinct row."""
    return torch.unique(rows, dim=0, return_inverse=True)


def run_rnn(rnn: nn.RNNBase, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Run a batch-first LSTM/GRU over the unpadded part of each sequence; padding stays zero."""
    packed = nn.utils.rnn.pack_padded_sequence(x, host_lengths(mask), batch_first=True, enforce_sorted=False)
    return nn.utils.rnn.pad_packed_sequence(rnn(packed)[0], batch_first=True, total_length=x.shape[1])[0]


class VariationalDropout(nn.Dropout):
    """One dropout mask per sequence, shared over time steps (Gal & Ghahramani 2016)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, D)
        if not self.training or self.p == 0:
            return x
        mask = x.new_empty(x.shape[0], 1, x.shape[2]).bernoulli_(1 - self.p) / (1 - self.p)
        return x * mask


DROPOUT_STYLES = ("variational", "standard")


def sequence_dropout(p: float, style: str) -> nn.Dropout:
    """Dropout on (batch, time, features): ``variational``, one mask per sequence over its time steps;
    ``standard``, a mask per element (``torch.nn.Dropout``: what AllenNLP's ``CrfTagger`` applies to its
    input and output and ``nn.LSTM`` between its layers)."""
    if style not in DROPOUT_STYLES:
        raise ConfigError(f"task.model.dropout_style={style!r}: expected one of {', '.join(DROPOUT_STYLES)}")
    return VariationalDropout(p) if style == "variational" else nn.Dropout(p)


def read_vectors(path: str | Path, words: list[str], matrix: torch.Tensor) -> int:
    """Copy into ``matrix`` (one row per word of ``words``) the vectors ``path`` has for them, either format
    (``static_vectors.store``: GloVe text, or the suite's .hdf5), matched exactly; the other rows keep what
    they hold. Returns how many words were found. A malformed file: ``DataError`` with file:line."""
    rows, dim = rows_for(path, words)
    if dim != matrix.shape[1]:
        raise ConfigError(f"{path}: vectors have {dim} dimensions, task.model.word_dim is {matrix.shape[1]}")
    found = [i for i, row in enumerate(rows) if row is not None and i != 0]  # row 0: padding, kept at zero
    if found:
        matrix[found] = torch.from_numpy(np.stack([rows[i] for i in found]))
    return len(found)


EMBEDDING_INITS = ("normal", "xavier_uniform")


def init_embedding(embedding: nn.Embedding, how: str) -> nn.Embedding:
    """``normal``: PyTorch's N(0, 1) as constructed; ``xavier_uniform``: what AllenNLP's ``Embedding``
    does without a pretrained file (and TensorFlow's default glorot_uniform in the original task code),
    the padding row kept at zero. Applied to word and character embeddings alike."""
    if how not in EMBEDDING_INITS:
        raise ConfigError(f"task.model.embedding_init={how!r}: expected one of {', '.join(EMBEDDING_INITS)}")
    if how == "xavier_uniform":
        with torch.no_grad():
            nn.init.xavier_uniform_(embedding.weight)
            if embedding.padding_idx is not None:
                embedding.weight[embedding.padding_idx].zero_()
    return embedding


class TokenEmbedder(nn.Module):
    """x_k: word embedding (optionally initialised from pretrained vectors, §4 and appendix A) + a character
    CNN over the same 262 character ids the biLM uses. ``init`` (``init_embedding``) starts both embeddings;
    the words a vectors file has then take its vectors."""

    def __init__(
        self,
        words: list[str],
        word_dim: int,
        char_dim: int,
        char_filters: int,
        char_width: int,
        vectors: str | None = None,
        freeze_vectors: bool = False,
        init: str = "xavier_uniform",
    ):
        super().__init__()
        self.word = init_embedding(nn.Embedding(len(words), word_dim, padding_idx=0), init)
        if vectors:
            with torch.no_grad():
                found = read_vectors(vectors, words, self.word.weight)
            self.word.weight.requires_grad_(not freeze_vectors)
            kept = "frozen" if freeze_vectors else "fine-tuned"
            said = f"{found:,} of {len(words) - 1:,} words found in {vectors}; the others start from {init}"
            print(f"pretrained vectors ({kept}): {said}", file=sys.stderr)
        else:
            print(f"no pretrained word vectors: every word starts from {init}", file=sys.stderr)
        self.char = init_embedding(nn.Embedding(N_CHARACTERS, char_dim, padding_idx=0), init) if char_filters else None
        self.conv = nn.Conv1d(char_dim, char_filters, char_width, padding=char_width // 2) if char_filters else None
        self.output_dim = word_dim + char_filters

    @classmethod
    def from_config(cls, words: list[str], m) -> TokenEmbedder:
        """From a task's ``model`` config (word_dim, char_dim, char_filters, char_width, vectors, embedding_init)."""
        return cls(
            words,
            m.word_dim,
            m.char_dim,
            m.char_filters,
            m.char_width,
            m.vectors_file,
            m.freeze_vectors,
            m.embedding_init,
        )

    def forward(self, word_ids: torch.Tensor, char_ids: torch.Tensor) -> torch.Tensor:
        x = self.word(word_ids)
        if self.conv is None:
            return x
        B, T, C = char_ids.shape
        # each distinct token of the batch once (QA batches repeat a context per question)
        unique, inverse = distinct_rows(char_ids.view(B * T, C))
        pooled = torch.relu(self.conv(self.char(unique).transpose(1, 2))).amax(dim=2)
        return torch.cat([x, rows_at(pooled, inverse).view(B, T, -1)], dim=-1)


class ElmoFeatures(nn.Module):
    """The task-specific ELMo mixes (§3.3): one at the encoder input, one at its output, or both,
    each with its own s and γ. A model owns its features and applies them in its ``forward``:

        elmo = self.features(side)                      # the mixes of one input side, first
        x = self.features.add_input(self.embedder(...), elmo)
        h = self.features.add_output(encoder(x), elmo)

    ``side`` is a batch (or one side of a two-text batch) carrying ``layers`` and
    ``layer_mask`` (``Task.make_batch``)."""

    def __init__(
        self,
        position: str,
        num_layers: int,
        dim: int,
        *,
        mix: str,
        dropout: float,
        layer_norm: bool,
        l2: float,
    ):  # the mix settings have no defaults here: they are the run's (tasks.common.config.ElmoConfig)
        super().__init__()
        self.l2 = l2  # λ of λ‖w‖² on every mix's raw weights (elmo.l2)
        if position not in POSITIONS:
            raise ConfigError(f"elmo.position must be one of {POSITIONS}, got {position!r}")
        self.position, self.num_layers, self.dim = position, num_layers, dim
        self.slots = {
            "none": [],
            "input": ["input"],
            "output": ["output"],
            "both": ["input", "output"],
            "probe": ["probe"],
        }[position]
        self.elmo = (
            Elmo(
                num_layers=num_layers,
                num_output_representations=len(self.slots),
                dropout=dropout,
                mix=mix,
                layer_norm=layer_norm,
            )
            if self.slots
            else None
        )

    @property
    def input_dim(self) -> int:
        return self.dim if "input" in self.slots else 0

    @property
    def output_dim(self) -> int:
        return self.dim if "output" in self.slots else 0

    def forward(self, side: dict) -> dict[str, torch.Tensor]:
        """The mixes ({"input": (B, T, D), "output": ...}) of one side's biLM layers."""
        if self.elmo is None:
            return {}
        if "layers" not in side:
            raise ConfigError(f"elmo.position={self.position} but the batch carries no biLM layers")
        return self.mix(side["layers"], side["layer_mask"])

    def mix(self, layers: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """The mixes of given layers (L+1, B, T, D) and mask (B, T)."""
        if self.elmo is None:
            return {}
        return dict(zip(self.slots, self.elmo.mix(layers, mask).representations))

    @staticmethod
    def add_input(x: torch.Tensor, elmo: dict[str, torch.Tensor]) -> torch.Tensor:
        """[x_k; ELMo_input] when ELMo is at the input, else x_k."""
        return torch.cat([x, elmo["input"]], dim=-1) if "input" in elmo else x

    @staticmethod
    def add_output(h: torch.Tensor, elmo: dict[str, torch.Tensor]) -> torch.Tensor:
        """[h_k; ELMo_output] when ELMo is at the output, else h_k."""
        return torch.cat([h, elmo["output"]], dim=-1) if "output" in elmo else h

    def regularizer(self) -> torch.Tensor:
        """λ‖w‖² of every mix (zero when there is none or λ = 0)."""
        return self.elmo.regularizer(self.l2) if self.elmo is not None and self.l2 else torch.zeros(())

    def layer_weights(self) -> dict:
        return dict(zip(self.slots, self.elmo.layer_weights())) if self.elmo is not None else {}


@dataclass
class TaskOutput:
    """What every task model's ``forward`` returns (as CrfTagger's output dict or transformers'
    ``ModelOutput``): the model's raw ``scores`` (emissions, logits, span or antecedent scores), the
    training ``loss`` when the batch carries gold labels, and the decoded ``predictions`` (one per
    example, in the model's own label indices or spans) when the model is in eval mode."""

    scores: Any
    loss: torch.Tensor | None = None
    predictions: list | None = None


class TaskModel(nn.Module):
    """The one contract between a task model and the trainer. A model implements ``scores(batch)``
    (its ELMo mixes applied inside), ``loss_of(scores, batch)`` and ``decode(scores, batch)``, and
    names the batch keys that hold its gold labels (``gold_keys``); ``forward`` puts them together
    into a ``TaskOutput``. The model owns its mixes (``self.features``, an ``ElmoFeatures``), their
    λ‖w‖² ``regularizer()`` and its optimizer groups (``parameter_groups``): the trainer asks the
    model, never its parts or the configuration."""

    features: ElmoFeatures
    gold_keys: tuple[str, ...] = ()

    def scores(self, batch: dict):
        raise NotImplementedError

    def loss_of(self, scores, batch: dict) -> torch.Tensor:
        raise NotImplementedError

    def decode(self, scores, batch: dict) -> list:
        raise NotImplementedError

    def forward(self, batch: dict) -> TaskOutput:
        scores = self.scores(batch)
        gold = all(key in batch for key in self.gold_keys)
        return TaskOutput(
            scores=scores,
            loss=self.loss_of(scores, batch) if gold else None,
            predictions=None if self.training else self.decode(scores, batch),
        )

    def regularizer(self) -> torch.Tensor:
        return self.features.regularizer()

    def decayed_weights(self) -> set[int]:
        """ids of the recurrent and feed-forward weight matrices: not biases, embeddings, CRF
        transitions or the mixing weights (γ, s), whose regularizer is λ‖w‖² (``elmo.l2``)."""
        mixes = {id(p) for p in self.features.parameters()}
        return {
            id(p)
            for m in self.modules()
            if isinstance(m, (nn.Linear, nn.LSTM, nn.GRU))
            for n, p in m.named_parameters()
            if n.startswith("weight") and id(p) not in mixes
        }

    def parameter_groups(self, weight_decay: float) -> list[dict]:
        """The optimizer's groups (as nanoGPT's ``configure_optimizers``): ℓ2 ``weight_decay`` on the
        weight matrices of ``decayed_weights`` only, none on everything else that trains."""
        decayed = self.decayed_weights() if weight_decay else set()
        trainable = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in trainable if id(p) in decayed]
        plain = [p for p in trainable if id(p) not in decayed]
        return [{"params": plain, "weight_decay": 0.0}] + (
            [{"params": decay, "weight_decay": weight_decay}] if decay else []
        )
