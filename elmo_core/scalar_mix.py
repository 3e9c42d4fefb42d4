"""ELMo's task-specific layer combination (Peters et al. 2018, §3.2, eq. 1):

    ELMo_k = γ · Σ_j s_j · h_{k,j},   s = softmax(w)

with the regularizer λ‖w‖² on the raw, pre-softmax w (§3.2: large λ pulls s towards the uniform
average; small λ lets the weights move). As in the original code, w starts at 0 (a uniform mix),
γ starts at 1 and is never regularized, and in ``last`` mode γ still scales the top layer.

Optional layer normalization is the original's, not PyTorch's per-token ``LayerNorm``: each layer is
normalized with ONE mean and ONE variance computed over all unmasked tokens and all dimensions of
the batch, with no learned gain or bias and ε = 1e-12.

Modes: ``all`` (learned s), ``last`` (top layer only), ``average`` (fixed s_j = 1/(L+1)).
"""

from __future__ import annotations

import torch
from torch import nn

MODES = ("all", "last", "average")


def batch_layer_norm(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Normalize ``x`` (B, T, D) with one mean/variance over the unmasked tokens × all dims."""
    m = mask.unsqueeze(-1).to(x.dtype)
    count = m.sum() * x.shape[-1]
    mean = (x * m).sum() / count
    var = (((x - mean) * m) ** 2).sum() / count
    return (x - mean) / torch.sqrt(var + eps)


class ScalarMix(nn.Module):
    def __init__(self, num_layers: int, mode: str = "all", layer_norm: bool = False):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"ScalarMix mode must be one of {MODES}, got {mode!r}")
        self.num_layers, self.mode, self.layer_norm = num_layers, mode, layer_norm
        # w exists (and is trained) only in 'all' mode; 'average' fixes it at 0 = uniform.
        self.scalar_parameters = nn.Parameter(torch.zeros(num_layers), requires_grad=(mode == "all"))
        self.gamma = nn.Parameter(torch.ones(1))

    def weights(self) -> torch.Tensor:
        """The normalized s_j (for ``last``: one-hot on the top layer)."""
        if self.mode == "last":
            s = torch.zeros(self.num_layers, device=self.gamma.device)
            s[-1] = 1.0
            return s
        return torch.softmax(self.scalar_parameters, dim=0)

    def regularizer(self, lam: float) -> torch.Tensor:
        """λ‖w‖² on the raw weights; zero (and no gradient) when nothing is learned."""
        if self.mode != "all" or lam == 0:
            return self.gamma.new_zeros(())
        return lam * (self.scalar_parameters**2).sum()

    def forward(self, layers: torch.Tensor | list[torch.Tensor], mask: torch.Tensor | None = None) -> torch.Tensor:
        """``layers``: (L+1, B, T, D) or a list of (B, T, D); ``mask`` (B, T) needed for layer norm."""
        if len(layers) != self.num_layers:
            raise ValueError(f"ScalarMix built for {self.num_layers} layers, got {len(layers)}")
        if self.layer_norm and mask is None:
            raise ValueError("ScalarMix(layer_norm=True) needs the mask")

        def prepare(h):
            return batch_layer_norm(h, mask) if self.layer_norm else h

        if self.mode == "last":
            return self.gamma * prepare(layers[-1])
        s = self.weights()
        return self.gamma * sum(s[j] * prepare(layers[j]) for j in range(self.num_layers))

    def extra_repr(self) -> str:
        return f"num_layers={self.num_layers}, mode={self.mode}, layer_norm={self.layer_norm}"
