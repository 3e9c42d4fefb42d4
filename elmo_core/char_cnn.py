"""The context-insensitive token encoder of Peters et al. (2018), §3.1 and §3.4 (the character
CNN of Józefowicz et al. 2016): character embeddings -> 1-D convolutions with max-pooling over
character positions -> ``n_highway`` highway layers -> linear projection to ``projection_dim``.
"""
from __future__ import annotations

import torch
from torch import nn

from .characters import N_CHARACTERS, PAD_CHAR
from .options import BiLMOptions


class CharCNN(nn.Module):
    """Characters of one token -> its context-insensitive representation x_k."""

    CONV_CHUNK = 32  # tokens per convolution pass
    CONV_CHUNK_AUTOGRAD = 128  # under autograd (training): fewer, larger products win (measured)
    padding_shortcut = True  # False: every window of every token (the plain reference of benchmarks)

    def __init__(self, opts: BiLMOptions):
        super().__init__()
        self.char_embed = nn.Embedding(N_CHARACTERS, opts.char_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(opts.char_dim, n, w) for w, n in opts.filters)
        n_filters = sum(n for _, n in opts.filters)
        # The original names: "carry" is the gate (sigmoid), "transform" the ReLU branch.
        self.highway_gate = nn.ModuleList(nn.Linear(n_filters, n_filters) for _ in range(opts.n_highway))
        self.highway_transform = nn.ModuleList(nn.Linear(n_filters, n_filters) for _ in range(opts.n_highway))
        self.projection = nn.Linear(n_filters, opts.projection_dim) if n_filters != opts.projection_dim else None
        self.activation = torch.tanh if opts.activation == "tanh" else torch.relu

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """``(N, max_chars)`` ids -> ``(N, projection_dim)``."""
        x = self._convolve_and_pool(char_ids)
        for gate, transform in zip(self.highway_gate, self.highway_transform):
            g = torch.sigmoid(gate(x))
            x = g * torch.relu(transform(x)) + (1.0 - g) * x
        return self.projection(x) if self.projection is not None else x

    def _convolve_and_pool(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Max over character windows of every filter, then the activation: ``(N, n_filters)``.

        A few tokens at a time, so that each convolution's (tokens x windows x filters) output is
        pooled while still in cache. Tokens are taken in order of length and each group only up
        to its longest token: a window of in-token padding alone gives the same value for every
        token, computed once and included in the max where such windows exist. Same values as
        convolving all ``max_chars`` positions of every token (and, under autograd, the same
        gradients: the padding-only windows all see the same inputs).
        """
        x = self.char_embed(char_ids).transpose(1, 2)  # (N, char_dim, max_chars)
        N, _, L = x.shape
        if N == 0 or not self.padding_shortcut:
            return torch.cat([self._pool_chunk(x[i: i + self.CONV_CHUNK], L)
                              for i in range(0, max(N, 1), self.CONV_CHUNK)])
        positions = torch.arange(1, L + 1, device=char_ids.device)
        widths = ((char_ids != PAD_CHAR + 1) * positions).amax(dim=1)  # up to the last non-padding id
        order = torch.argsort(widths)
        grad = torch.is_grad_enabled() and any(p.requires_grad for p in self.parameters())
        size = self.CONV_CHUNK_AUTOGRAD if grad else self.CONV_CHUNK
        chunks = [order[i: i + size] for i in range(0, N, size)]
        spans = widths[order][size - 1::size].tolist() + [int(widths.max())]
        if grad:
            # autograd: join the sorted chunks, then put the tokens back in their order
            pooled = torch.cat([self._pool_chunk(x.index_select(0, rows), span) for rows, span in zip(chunks, spans)])
            return pooled.index_select(0, torch.argsort(order))
        pooled = torch.empty(N, sum(conv.out_channels for conv in self.convs), device=x.device, dtype=x.dtype)
        for rows, span in zip(chunks, spans):
            pooled[rows] = self._pool_chunk(x.index_select(0, rows), span)
        return pooled

    def _pool_chunk(self, x: torch.Tensor, width: int) -> torch.Tensor:
        """Pooled filters for tokens whose characters after ``width`` are all in-token padding."""
        L = x.shape[2]
        pad = self.char_embed.weight[PAD_CHAR + 1].view(1, -1, 1)
        pooled = []
        for conv in self.convs:
            w = conv.kernel_size[0]
            span = min(L, max(width, 1) + w - 1)  # every window that reaches a non-padding id
            out = self._conv_max(conv, x[:, :, :span])
            if span < L:  # windows of padding only exist too
                out = torch.maximum(out, self._conv_max(conv, pad.expand(1, -1, w)))
            pooled.append(self.activation(out))
        return torch.cat(pooled, dim=1)

    @staticmethod
    def _conv_max(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
        """``conv(x).amax(2)`` computed as one matrix product over character windows (several
        times faster on CPU than the small-channel convolution kernel; same result)."""
        n, width = conv.out_channels, conv.kernel_size[0]
        N, C, L = x.shape
        windows = x.unfold(2, width, 1).permute(0, 2, 1, 3).reshape(N * (L - width + 1), C * width)
        out = torch.addmm(conv.bias, windows, conv.weight.reshape(n, C * width).t())
        return out.view(N, L - width + 1, n).amax(dim=1)
