"""One biLM training update (Peters et al. 2018, §3.1), fast: the same loss and gradients as
``LanguageModel.forward`` followed by ``backward``, computed with less overhead.

* The character CNN runs once for the word types of both streams (the backward stream reads
  the same words), instead of once per direction; the types are found by numpy. With two or
  more threads, each half of the types runs on its own thread, forward and backward (the
  CNN's many small operations gain little from a second thread inside each).
* Each LSTM layer (input product and step loop) is one autograd function with its backward pass
  through time written out (``fused_lstm``): no per-step autograd records, the weight gradients
  as large products over all steps, its buffers kept from one update to the next.
* The adaptive softmax (head and tail clusters) computes its loss and its gradients in one pass
  over chunks of rows (``softmax_head``), so the logits never leave the cache; the LSTMs'
  gradients then start from the gradient of their top output (``grad_outputs``).
* On a CPU with two or more threads the forward and the backward LM — LSTMs, dropout, softmax,
  and their backward passes — run at the same time, each on its share of the threads
  (``cpu_speedups.run_side_by_side``). Each direction's gradients are taken with
  ``torch.autograd.grad`` and added up afterwards (the softmax is shared), so the two threads
  never write the same tensor; then the character CNN's backward runs once.
* Each direction draws its dropout masks on its own thread, from its own generator
  (``direction_generators``, seeded from the global one where the plain path seeds them), in the
  plain path's order: both paths see the same masks from the same seed, and the threads never
  share a generator.

The plain path stays the reference: ``tests/elmo_core/test_lm_fast_step.py`` compares losses over 20
updates and gradients of single updates. The character CNN's passes and the softmax run in named profiler
scopes (``SCOPES``), by which ``benchmarks.pretrain_speed --profile`` adds up where an update's time goes.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.profiler import record_function

from ..bilm import State, dropout_mask
from ..cpu_speedups import run_side_by_side
from .fused_lstm import projected_lstm
from .lm_data import LMBatch
from .lm_training import LanguageModel, direction_generators
from .softmax_head import adaptive_nll_with_grads

SCOPES = ("char CNN forward", "char CNN backward", "softmax")  # the LSTMs' passes show as their Function's name


def _scoped(label: str, fn, *args, **kwargs):
    with record_function(label):
        return fn(*args, **kwargs)


class FastTrainingStep:
    """``step(batch, state, scale)`` -> (summed NLL per direction (2,), new state), with
    ``scale * NLL.sum()``'s gradients added to the parameters' ``.grad``."""

    def __init__(self, lm: LanguageModel, side_by_side: bool | None = None):
        self.lm = lm
        self.side_by_side = side_by_side
        self._workspaces: dict = {}  # per (direction, layer) and (direction, "softmax"): buffers reused every update

    def _parallel(self, device) -> bool:
        if self.side_by_side is not None:
            return self.side_by_side
        return torch.device(device).type == "cpu" and torch.get_num_threads() >= 2

    def _masks(self, shape_packed, shape_padded, dtype, device, generator) -> list[torch.Tensor | None]:
        """Dropout multipliers (mask / keep-probability) of one direction: one per layer input
        (packed), then the top output (padded) — the plain path's order of draws."""
        p, L = self.lm.dropout, self.lm.bilm.opts.n_layers
        if not (self.lm.training and p):
            return [None] * (L + 1)
        draw = lambda shape: dropout_mask(shape, p, dtype, device, generator)  # noqa: E731
        return [draw(shape_packed) for _ in range(L)] + [draw(shape_padded)]

    def _direction(
        self,
        direction: int,
        tokens: torch.Tensor,
        lengths: torch.Tensor,
        targets: torch.Tensor,
        state: State,
        generator: torch.Generator,
        scale: float,
    ):
        bilm, opts = self.lm.bilm, self.lm.bilm.opts
        layers = bilm.forward_layers if direction == 0 else bilm.backward_layers
        B, T, P = tokens.shape
        masks = self._masks((int(lengths.sum()), P), (B, T, P), tokens.dtype, tokens.device, generator)
        leaf = tokens.detach().requires_grad_()
        packed = pack_padded_sequence(leaf, lengths.cpu(), batch_first=True, enforce_sorted=False)
        order, unsort = packed.sorted_indices, packed.unsorted_indices
        if order is not None:
            state = [(h.index_select(0, order.to(h.device)), c.index_select(0, order.to(c.device))) for h, c in state]
        batch_sizes = packed.batch_sizes.tolist()
        data, final = packed.data, []
        for k, layer in enumerate(layers):
            h0, c0 = state[k]
            inp = data * masks[k] if masks[k] is not None else data
            out, h, c = projected_lstm(
                inp,
                layer.w_x,
                layer.bias + layer.forget_bias,
                layer.w_h,
                layer.w_p,
                h0,
                c0,
                batch_sizes,
                layer.cell_clip,
                layer.proj_clip,
                self._workspaces.setdefault((direction, k), {}),
            )
            if k > 0 and opts.use_skip_connections:
                out = out + inp
            final.append((h, c))
            data = out
        if unsort is not None:
            final = [(h.index_select(0, unsort.to(h.device)), c.index_select(0, unsort.to(c.device))) for h, c in final]
        top = pad_packed_sequence(packed._replace(data=data), batch_first=True, total_length=T)[0]
        if masks[-1] is not None:
            top = top * masks[-1]
        valid = torch.arange(T, device=tokens.device).unsqueeze(0) < lengths.to(tokens.device).unsqueeze(1)
        valid = valid & (targets >= 0)
        top = top[valid]
        nll, d_top, softmax_grads = _scoped(
            "softmax",
            adaptive_nll_with_grads,
            self.lm.softmax,
            top,
            targets[valid],
            scale,
            self._workspaces.setdefault((direction, "softmax"), {}),
        )
        grads = torch.autograd.grad(top, [leaf] + list(layers.parameters()), grad_outputs=d_top, allow_unused=True)
        return nll.sum(), final, list(grads) + softmax_grads

    def __call__(
        self, batch: LMBatch, state: State, scale: float, rows: slice = slice(None), device: str | torch.device = "cpu"
    ) -> tuple[torch.Tensor, State]:
        lm, L = self.lm, self.lm.bilm.opts.n_layers
        lengths = torch.from_numpy(batch.lengths[rows]).to(device)
        targets = [torch.from_numpy(t[rows]).to(device) for t in (batch.forward_targets, batch.backward_targets)]
        B = batch.forward_chars[rows].shape[0]
        generators = direction_generators(device)  # drawn where the plain path draws them
        parallel = self._parallel(device)
        types = TokenTypes(batch, rows, device)
        halves = types.chars.tensor_split(2 if parallel and len(types.chars) > 1 else 1)
        encoder = lm.bilm.token_encoder
        work = [lambda h=h: _scoped("char CNN forward", encoder, h) for h in halves]
        encoded = run_side_by_side(*work) if len(work) == 2 else [w() for w in work]
        tokens = types.scatter(torch.cat([e.detach() for e in encoded]))
        token_parts = tokens.split(B)
        work = [
            lambda d=d: self._direction(
                d, token_parts[d], lengths, targets[d], state[d * L : (d + 1) * L], generators[d], scale
            )
            for d in range(2)
        ]
        results = run_side_by_side(*work) if parallel else [w() for w in work]
        (nll_f, final_f, grads_f), (nll_b, final_b, grads_b) = results
        n_lstm = len(list(lm.bilm.forward_layers.parameters()))
        for layers, grads in ((lm.bilm.forward_layers, grads_f), (lm.bilm.backward_layers, grads_b)):
            _accumulate(layers.parameters(), grads[1 : 1 + n_lstm])
        softmax_grads = [_sum(a, b) for a, b in zip(grads_f[1 + n_lstm :], grads_b[1 + n_lstm :])]
        _accumulate(lm.softmax.parameters(), softmax_grads)
        # the character CNN's backward, each half of the types on its own thread as in its forward
        d_types = types.gather_gradient(torch.cat([grads_f[0], grads_b[0]])).split([len(h) for h in halves])
        params = list(encoder.parameters())
        work = [
            lambda e=e, d=d: _scoped("char CNN backward", torch.autograd.grad, e, params, d, allow_unused=True)
            for e, d in zip(encoded, d_types)
        ]
        grads = run_side_by_side(*work) if len(work) == 2 else [w() for w in work]
        _accumulate(params, [functools.reduce(_sum, g) for g in zip(*grads)])
        return torch.stack([nll_f, nll_b]), final_f + final_b


class TokenTypes:
    """The distinct tokens of both streams of a batch (the backward stream reads the same words),
    found by numpy on the rows' character bytes (much faster than ``torch.unique(dim=0)``): the
    character CNN runs once per type, and its outputs are spread to the (2B, T) positions."""

    def __init__(self, batch: LMBatch, rows: slice, device):
        chars = np.concatenate([batch.forward_chars[rows], batch.backward_chars[rows]])
        lengths = np.concatenate([batch.lengths[rows], batch.lengths[rows]])
        self.shape = chars.shape[:2]
        mask = np.arange(self.shape[1])[None, :] < lengths[:, None]
        words = np.ascontiguousarray(chars[mask])
        first, inverse = _distinct_rows(words)
        self.chars = torch.from_numpy(words[first]).to(device)
        self.mask = torch.from_numpy(mask).to(device)
        self.inverse = torch.from_numpy(inverse.reshape(-1)).to(device)

    def scatter(self, encoded: torch.Tensor) -> torch.Tensor:
        """(types, P) -> (2B, T, P), zeros on padding (``BiLM.embed_tokens``'s layout)."""
        out = encoded.new_zeros(*self.shape, encoded.shape[1])
        out[self.mask] = encoded[self.inverse]
        return out

    def gather_gradient(self, d_tokens: torch.Tensor) -> torch.Tensor:
        """The gradient of ``scatter``'s input from that of its output."""
        d_types = d_tokens.new_zeros(len(self.chars), d_tokens.shape[2])
        return d_types.index_add_(0, self.inverse, d_tokens[self.mask])


_ROW_HASH = np.random.default_rng(20181).integers(1, 2**63, size=512, dtype=np.int64) | 1


def _distinct_rows(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each distinct row's first occurrence, each row's distinct-row number), the rows
    numbered in sorted order as ``np.unique`` does. Rows are told apart by a 64-bit hash (an
    integer product with fixed odd weights, wrapping) and the result is checked row by row
    against the input; on a collision the exact byte comparison decides."""
    if words.shape[1] <= len(_ROW_HASH):
        with np.errstate(over="ignore"):
            keys = words.astype(np.int64, copy=False) @ _ROW_HASH[: words.shape[1]]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        if np.array_equal(words[first][inverse.reshape(-1)], words):
            return first, inverse
    keys = words.view(np.dtype((np.void, words.dtype.itemsize * words.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse


def _sum(a, b):
    if a is None or b is None:
        return b if a is None else a
    return a + b


def _accumulate(params, grads) -> None:
    for p, g in zip(params, grads):
        if g is None:
            g = torch.zeros_like(p)  # unused in this batch (a softmax tail): still a defined gradient
        if p.grad is None:
            p.grad = g.detach().clone() if g.requires_grad else g
        else:
            p.grad += g


def train_step_plain(
    lm: LanguageModel,
    batch: LMBatch,
    state: State,
    scale: float,
    rows: slice = slice(None),
    device: str | torch.device = "cpu",
):
    """The reference: ``LanguageModel.forward`` and autograd's ``backward``."""
    nll, final = lm(batch, state, rows, device)
    (nll.sum() * scale).backward()
    return nll.detach(), final
