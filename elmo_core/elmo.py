"""ELMo representations for a task model (Peters et al. 2018, §3.2–3.3).

``Elmo`` runs the frozen biLM once per batch and returns one ScalarMix per requested output
(e.g. one for the task encoder's input, one for its output: §3.3 "ELMo at the input and output"),
each followed by dropout. The biLM's parameters never receive gradients; only the mixes (w, γ) are
trained with the task. ``Elmo.mix`` applies the mixes to precomputed layer activations, so a
task trainer can feed cached activations instead of re-running the biLM every epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .bilm import BiLM
from .original_format import load_bilm
from .scalar_mix import ScalarMix


@dataclass
class ElmoOutput:
    representations: list[torch.Tensor]  # each (B, T, 2*projection_dim)
    mask: torch.Tensor  # (B, T) bool


class Elmo(nn.Module):
    def __init__(
        self,
        options_file: str | Path | None = None,
        weight_file: str | Path | None = None,
        num_output_representations: int = 1,
        dropout: float = 0.5,
        mix: str = "all",
        layer_norm: bool = False,
        stateful: bool = False,
        bilm: BiLM | None = None,
        num_layers: int | None = None,
    ):
        """Either ``options_file`` + ``weight_file`` (or a loaded ``bilm``) — or, to mix cached
        activations only, ``num_layers`` (L+1) with no biLM at all."""
        super().__init__()
        if bilm is None and options_file is not None:
            bilm = load_bilm(options_file, weight_file, stateful=stateful)
        if bilm is not None:
            for p in bilm.parameters():
                p.requires_grad_(False)
            num_layers = bilm.opts.n_layers + 1
        if num_layers is None:
            raise ValueError("Elmo needs a biLM (options_file/weight_file or bilm) or num_layers")
        self.bilm = bilm
        self.num_layers = num_layers
        self.mixes = nn.ModuleList(ScalarMix(num_layers, mix, layer_norm) for _ in range(num_output_representations))
        self.dropout = nn.Dropout(dropout)

    def train(self, mode: bool = True):
        super().train(mode)
        if self.bilm is not None:
            self.bilm.eval()  # frozen: no dropout, keeps its per-type token cache
        return self

    def mix(self, layers: torch.Tensor, mask: torch.Tensor) -> ElmoOutput:
        """Apply every ScalarMix (+ dropout) to biLM layers (L+1, B, T, D)."""
        m = mask.unsqueeze(-1).to(layers.dtype)
        reps = [self.dropout(mix(layers, mask)) * m for mix in self.mixes]
        return ElmoOutput(reps, mask)

    def forward(self, char_ids: torch.Tensor) -> ElmoOutput:
        if self.bilm is None:
            raise RuntimeError("this Elmo has no biLM: call .mix() with cached activations")
        with torch.no_grad():
            out = self.bilm(char_ids)
        return self.mix(out.layers, out.mask)

    def regularizer(self, lam: float) -> torch.Tensor:
        """Σ over mixes of λ‖w‖² — add it to the task loss."""
        return sum((m.regularizer(lam) for m in self.mixes), torch.zeros(()))

    def layer_weights(self) -> list[dict]:
        """Softmax-normalized s and γ of every mix (for results.json / Figure 2)."""
        return [
            {"s": [round(float(v), 6) for v in m.weights().detach()], "gamma": float(m.gamma.detach())}
            for m in self.mixes
        ]
