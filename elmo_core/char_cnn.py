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
    CONV_CHUNK_AUTOGRAD = 256  # under autograd (training): fewer, larger products win (measured)
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
        embed = lambda ids: CharEmbedding.apply(self.char_embed.weight, ids, self.char_embed.padding_idx)  # noqa: E731
        N, L = char_ids.shape
        if N == 0 or not self.padding_shortcut:
            x = embed(char_ids).transpose(1, 2)  # (N, char_dim, max_chars)
            return torch.cat(
                [self._pool_chunk(x[i : i + self.CONV_CHUNK], L) for i in range(0, max(N, 1), self.CONV_CHUNK)]
            )
        positions = torch.arange(1, L + 1, device=char_ids.device)
        widths = ((char_ids != PAD_CHAR + 1) * positions).amax(dim=1)  # up to the last non-padding id
        order = torch.argsort(widths)
        grad = torch.is_grad_enabled() and any(p.requires_grad for p in self.parameters())
        size = self.CONV_CHUNK_AUTOGRAD if grad else self.CONV_CHUNK
        spans = widths[order][size - 1 :: size].tolist() + [int(widths.max())]
        # the tokens' ids put in order of width before the embedding, the chunks cut by split (its
        # backward pass is one concatenation; selecting each chunk's rows zero-filled a whole-batch
        # gradient per chunk)
        chunks = embed(char_ids.index_select(0, order)).transpose(1, 2).split(size)
        if grad:
            filters = self._all_filters()
            pooled = [self._pool_chunk_all_filters(x, span, filters) for x, span in zip(chunks, spans)]
        else:
            pooled = [self._pool_chunk(x, span) for x, span in zip(chunks, spans)]
        return torch.cat(pooled).index_select(0, torch.argsort(order))  # back in the tokens' order

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

    def _all_filters(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """For ``_pool_chunk_all_filters``, made once per forward pass: every filter's weights
        zero-padded to the widest and stacked ``(n_filters, char_dim, widest)``, the biases, each
        filter's width, and each filter's value on the padding-only window."""
        filter_widths = [conv.kernel_size[0] for conv in self.convs]
        widest = max(filter_widths)
        weight = torch.cat(
            [nn.functional.pad(conv.weight, (0, widest - w)) for conv, w in zip(self.convs, filter_widths)]
        )
        bias = torch.cat([conv.bias for conv in self.convs])
        per_filter = torch.tensor(
            sum(([w] * conv.out_channels for conv, w in zip(self.convs, filter_widths)), []), device=weight.device
        )
        pad = self.char_embed.weight[PAD_CHAR + 1].view(-1, 1).expand(-1, widest)
        padding_window = torch.addmv(bias, weight.reshape(weight.shape[0], -1), pad.reshape(-1))
        return weight, bias, per_filter, padding_window

    def _pool_chunk_all_filters(self, x: torch.Tensor, width: int, filters) -> torch.Tensor:
        """``_pool_chunk`` for training: every filter in one window product, the narrower ones
        zero-padded to the widest (``WindowConvMax``), instead of one product, one max and one
        autograd record per filter. The same windows per filter: those starting at or before
        the last non-padding id (``width``) that fit in the token (a start too late for a
        filter is masked out), and the padding-only window where the token has one.
        ``filters``: ``_all_filters()``."""
        weight, bias, per_filter, padding_window = filters
        N, C, L = x.shape
        widest, width = weight.shape[2], max(width, 1)
        reach = width - 1 + widest
        if reach > L:
            pad = self.char_embed.weight[PAD_CHAR + 1].view(1, -1, 1)
            x = torch.cat([x, pad.expand(N, -1, reach - L)], 2)
        else:
            x = x[:, :, :reach]
        late = torch.arange(width, device=x.device).unsqueeze(1) > L - per_filter  # (starts, filters)
        mask = (
            torch.zeros(late.shape, dtype=x.dtype, device=x.device).masked_fill_(late, float("-inf"))
            if bool(late.any())
            else None
        )
        has_padding_window = width + per_filter - 1 < L
        extra = (
            padding_window.masked_fill(~has_padding_window, float("-inf")) if bool(has_padding_window.any()) else None
        )
        return self.activation(WindowConvMax.apply(x, weight, bias, mask, extra))

    def _conv_max(self, conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
        """``conv(x).amax(2)`` computed as one matrix product over character windows (several
        times faster on CPU than the small-channel convolution kernel; same result)."""
        n, width = conv.out_channels, conv.kernel_size[0]
        windows = _windows(x, width)
        out = torch.addmm(conv.bias, windows, conv.weight.reshape(n, -1).t())
        return out.view(x.shape[0], -1, n).amax(dim=1)


class CharEmbedding(torch.autograd.Function):
    """``nn.functional.embedding(ids, weight, padding_idx=padding_idx)``, its weight gradient added up
    by ``index_add_`` (3x faster on a CPU than the embedding's own backward), the padding row's left at 0."""

    @staticmethod
    def forward(ctx, weight, ids, padding_idx):
        ctx.save_for_backward(ids)
        ctx.rows, ctx.padding_idx = weight.shape[0], padding_idx
        return weight.index_select(0, ids.reshape(-1)).view(*ids.shape, weight.shape[1])

    @staticmethod
    def backward(ctx, grad):
        (ids,) = ctx.saved_tensors
        d_weight = grad.new_zeros(ctx.rows, grad.shape[-1])
        d_weight.index_add_(0, ids.reshape(-1), grad.reshape(-1, grad.shape[-1]))
        if ctx.padding_idx is not None:
            d_weight[ctx.padding_idx] = 0
        return d_weight, None, None


def _windows(x: torch.Tensor, width: int) -> torch.Tensor:
    """``(N, C, L)`` -> every window of ``width`` positions, ``(N * (L - width + 1), C * width)``."""
    N, C, L = x.shape
    return x.unfold(2, width, 1).permute(0, 2, 1, 3).reshape(N * (L - width + 1), C * width)


class WindowConvMax(torch.autograd.Function):
    """``(conv1d(x, weight, bias) + mask).amax(2)`` with a backward pass written for it: the
    gradient of each (token, filter) goes to its maximal window (split among windows that tie, as
    autograd's ``amax`` splits it), then through the window product, and the windows' gradients
    are added back onto their positions, with no autograd records for the unfold, the product or
    the max. ``mask`` (windows x filters, or None) adds -inf where a window does not count;
    ``extra`` (filters, or None) is one more window's value per filter, the same for every token (the
    padding-only window), -inf where it does not count. The maximum is ``amax`` (values only, many
    times faster than ``max`` with its indices); the backward pass finds the maximal windows again by
    comparing with it."""

    @staticmethod
    def forward(ctx, x, weight, bias, mask=None, extra=None):
        n, C, width = weight.shape
        N, L = x.shape[0], x.shape[2]
        windows = _windows(x, width)
        out = torch.addmm(bias, windows, weight.reshape(n, C * width).t()).view(N, L - width + 1, n)
        if mask is not None:
            out += mask
        best = out.amax(dim=1)
        if extra is not None:
            best = torch.maximum(best, extra)
        ctx.save_for_backward(windows, out, best, weight, extra)
        ctx.length = L
        return best

    @staticmethod
    def backward(ctx, d_best):
        windows, out, best, weight, extra = ctx.saved_tensors
        n, C, width = weight.shape
        N, positions = out.shape[0], ctx.length - width + 1
        # 1.0 at the maximal windows of each (token, filter): compared straight into floats (a bool
        # result converted afterwards took 5x as long)
        hit = torch.eq(out, best.unsqueeze(1), out=torch.empty_like(out))
        count = hit.sum(1)
        if extra is not None:
            extra_hit = torch.eq(extra, best, out=torch.empty_like(best))
            count += extra_hit
        share = d_best / count
        d_extra = (extra_hit * share).sum(0) if extra is not None else None
        d_out = hit.mul_(share.unsqueeze(1)).view(N * positions, n)
        d_weight = (d_out.t() @ windows).view(n, C, width)
        d_windows = (d_out @ weight.reshape(n, C * width)).view(N, positions, C, width)
        d_x = d_best.new_zeros(N, C, ctx.length)
        for k in range(width):
            d_x[:, :, k : k + positions] += d_windows[:, :, :, k].transpose(1, 2)
        d_bias = d_best.sum(0) if extra is None else d_best.sum(0) - d_extra
        return d_x, d_weight, d_bias, None, d_extra
