"""The biLM's softmax (Peters et al. 2018, §3.1: Θs, shared by both directions) for training: the
negative log-likelihood of ``torch.nn.AdaptiveLogSoftmaxWithLoss`` — the same parameters and the
same mathematics as ``-forward(...).output`` — together with its gradients, in one pass.

Under plain autograd each softmax (the head: shortlist words + one entry per tail cluster,
4,003 columns for the small biLM; the tail clusters: 16,000, 80,000 and 148,674 columns) writes its
(rows x columns) logits and log-probabilities to memory, reads them back, and makes more
full-size tensors in the backward pass (the gather's zero-filled gradient, the log-softmax's
gradient). A training update needs only the loss and its gradients, and the gradient of
``scale * Σ NLL`` with respect to the logits is known as soon as the logits are:
``scale * (softmax - onehot(target))``. So each softmax here works on a few rows at a time
(about a million logits: up to 256 rows of the head, a few of a wide tail cluster), keeps them
in cache, and in the same pass turns them into the input and weight gradients (two more matrix
products): three products per softmax instead of autograd's three plus the memory traffic, and
nothing of size rows x columns outlives its chunk. Every chunk's logits go into one buffer,
turned into probabilities in place; a caller that passes a ``workspace`` keeps the buffers from
one update to the next (fresh megabytes per chunk were new pages from the operating system each
time: faulting them in cost as much as the softmax itself).

The softmax itself is two passes over a chunk: ``exp`` in place and the row sums; the row scaling
``scale / sum`` goes onto the narrow sides of the products (the chunk's rows of x, and the (rows x
in_features) input gradient), never over the chunk. Subtracting each row's largest logit first (two
more passes) is needed only where ``exp`` could leave float32's range, and a bound tells where it
cannot: ``|logit| <= ||x_row|| * max_word ||w_word|| + max |b|`` (Cauchy-Schwarz). A chunk with a
row over ``EXP_LIMIT - log(words)`` takes the shifted route.

The caller takes the input's gradient on through autograd (``torch.autograd.grad`` with
``grad_outputs``) and adds the parameter gradients itself.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .fused_lstm import kept_buffer

NARROW = (
    16  # input features up to which a softmax counts as low-rank (of the small biLM's tails, 32, 8, 2: the last two)
)
CHUNK_ELEMENTS = 2**20  # logits per chunk (4 MB): 256 rows of the head's 4,003 columns, 7 of a 148,674-word tail
EXP_LIMIT = 85.0  # largest logit whose exp, summed over log(words) more, stays in float32 (max 3.4e38 = e^88.7)


def _softmax_nll_with_grads(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    column: torch.Tensor,
    scale: float,
    workspace: dict | None = None,
):
    """For ``logits = x Wᵀ + b``: ``-log_softmax(logits)[row, column[row]]`` per row, and the
    gradients of ``scale * Σ rows`` with respect to x, W and b."""
    # A low-rank tail cluster (a few hidden units, many words) takes its weight gradient as (hidden, words):
    # that product then runs along the words, several times faster than across them.
    narrow = weight.shape[1] <= NARROW
    nll, dx = x.new_empty(x.shape[0]), torch.empty_like(x)
    dw = x.new_zeros(weight.shape[::-1] if narrow else weight.shape)
    db = torch.zeros_like(bias) if bias is not None else None
    chunk = max(4, min(256, CHUNK_ELEMENTS // weight.shape[0]))  # a wide tail: fewer rows, still in cache
    buffer = kept_buffer(workspace, ("logits", weight.shape[0]), (min(chunk, x.shape[0]), weight.shape[0]), x)
    # each chunk's largest |logit| can be no more than this; one synchronisation per call, not one per chunk
    bound = _logit_bound(x, weight, narrow) + (bias.abs().amax() if bias is not None else 0.0)
    n_chunks = -(-x.shape[0] // chunk)
    chunk_bounds = nn.functional.pad(bound, (0, n_chunks * chunk - x.shape[0])).view(n_chunks, chunk).amax(1)
    in_range = (chunk_bounds <= EXP_LIMIT - math.log(weight.shape[0])).tolist()
    for start, exp_is_safe in zip(range(0, x.shape[0], chunk), in_range):
        rows = slice(start, start + chunk)
        xs, col = x[rows], column[rows, None]
        logits = buffer[: xs.shape[0]]
        if bias is not None:
            torch.addmm(bias, xs, weight.t(), out=logits)
        else:
            torch.mm(xs, weight.t(), out=logits)
        target = logits.gather(1, col)
        top = None if exp_is_safe else logits.amax(1, keepdim=True)
        exps = (logits if top is None else logits.sub_(top)).exp_()
        total = exps.sum(1, keepdim=True)
        # NLL = log Σ exp(logit - top) + top - target: exact however small the target's own probability
        nll_rows = total.log().sub_(target if top is None else target - top)
        nll[rows] = nll_rows.squeeze(1)
        # scale * (softmax - onehot(target)) = r * (exps - total * onehot(target)), with r = scale / total: the
        # target's entry is corrected in place and r goes onto the products' narrow sides, not over the chunk
        r = scale / total
        exps.scatter_add_(1, col, total.neg())
        torch.mm(exps, weight, out=dx[rows]).mul_(r)
        if narrow:
            dw.addmm_((xs * r).t(), exps)
        else:
            dw.addmm_(exps.t(), xs * r)
        if db is not None:
            db.addmv_(exps.t(), r.squeeze(1))
    if narrow:  # (words, hidden) again; a product with the identity transposes it exactly, faster than a copy
        dw = torch.mm(dw.t(), torch.eye(dw.shape[0], dtype=dw.dtype, device=dw.device))
    return nll, dx, dw, db


def _logit_bound(x: torch.Tensor, weight: torch.Tensor, narrow: bool) -> torch.Tensor:
    """Per row of x, a bound on |x · w| over the words w (rows of ``weight``): Cauchy-Schwarz,
    ||x|| max ||w||; for a low-rank weight, whose row norms are slow to take, ||x||_1 max |w_ij|."""
    if weight.numel() == 0:  # a tail projected to no hidden units: every logit is its bias
        return x.new_zeros(x.shape[0])
    if narrow:
        return x.abs().sum(1) * weight.abs().amax()
    return x.norm(dim=1) * weight.norm(dim=1).amax()


def adaptive_nll_with_grads(
    softmax: nn.AdaptiveLogSoftmaxWithLoss,
    x: torch.Tensor,
    target: torch.Tensor,
    scale: float,
    workspace: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """``-softmax(x, target).output`` (N,), the gradient of ``scale * Σ NLL`` with respect to ``x``
    (N, in_features), and with respect to each of ``softmax.parameters()``, in that order (a
    zero tensor for a tail cluster no target falls in). No autograd graph is made."""
    if x.shape[0] != target.shape[0]:
        raise ValueError(f"{x.shape[0]} rows of input but {target.shape[0]} targets")
    if ((target < 0) | (target >= softmax.n_classes)).any():
        raise ValueError(f"targets must be in [0, {softmax.n_classes - 1}]")
    x = x.detach()
    grads = {}
    with torch.no_grad():
        head_column = target.clone()  # the word itself in the shortlist, else its cluster's entry
        tail_parts = []
        bounds = [0] + list(softmax.cutoffs)
        for k in range(1, len(bounds) - 1):
            down, up = softmax.tail[k - 1][0].weight, softmax.tail[k - 1][1].weight
            rows = ((target >= bounds[k]) & (target < bounds[k + 1])).nonzero().squeeze(1)
            if rows.numel() == 0:
                grads[f"tail.{k - 1}.0.weight"], grads[f"tail.{k - 1}.1.weight"] = (
                    torch.zeros_like(down),
                    torch.zeros_like(up),
                )
                continue
            head_column[rows] = softmax.shortlist_size + k - 1
            x_rows = x.index_select(0, rows)
            hidden = x_rows @ down.t()
            local_nll, d_hidden, d_up, _ = _softmax_nll_with_grads(
                hidden, up, None, target[rows] - bounds[k], scale, workspace
            )
            grads[f"tail.{k - 1}.0.weight"], grads[f"tail.{k - 1}.1.weight"] = d_hidden.t() @ x_rows, d_up
            tail_parts.append((rows, local_nll, d_hidden @ down))
        nll, dx, grads["head.weight"], d_bias = _softmax_nll_with_grads(
            x, softmax.head.weight, softmax.head.bias, head_column, scale, workspace
        )
        if d_bias is not None:
            grads["head.bias"] = d_bias
        for rows, local_nll, d_x_rows in tail_parts:
            nll.index_add_(0, rows, local_nll)
            dx.index_add_(0, rows, d_x_rows)
    return nll, dx, [grads[name] for name, _ in softmax.named_parameters()]
