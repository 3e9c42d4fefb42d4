"""The biLM's softmax (Peters et al. 2018, §3.1: Θs, shared by both directions) for training: the
target log-probabilities of ``torch.nn.AdaptiveLogSoftmaxWithLoss`` — the same parameters and
the same mathematics as its ``forward(...).output`` — with a cheaper head.

The head (shortlist words + one entry per tail cluster; 4,002 columns for the small biLM) is a
full softmax for every predicted token. Under plain autograd its (tokens x columns) logits and
log-probabilities are written to memory, read back, and a third full-size tensor is made in
the backward pass. Here the head is one autograd function that works on a few hundred rows at
a time, so the logits stay in cache: the forward pass keeps only each row's log-sum-exp, and
the backward pass recomputes the logits of its rows (one more matrix product) and turns them
into the gradient in place. The tail clusters use the module's own layers under autograd.
"""
from __future__ import annotations

import torch
from torch import nn

HEAD_CHUNK_ROWS = 256


class HeadLogProb(torch.autograd.Function):
    """``log_softmax(x Wᵀ + b)[row, column[row]]`` for every row, computed in chunks of rows."""

    @staticmethod
    def forward(ctx, x, weight, bias, column):
        out, lse = x.new_empty(x.shape[0]), x.new_empty(x.shape[0])
        for start in range(0, x.shape[0], HEAD_CHUNK_ROWS):
            rows = slice(start, start + HEAD_CHUNK_ROWS)
            logits = torch.addmm(bias, x[rows], weight.t()) if bias is not None else x[rows] @ weight.t()
            torch.logsumexp(logits, 1, out=lse[rows])
            torch.sub(logits.gather(1, column[rows, None]).squeeze(1), lse[rows], out=out[rows])
        ctx.save_for_backward(x, weight, bias, column, lse)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, column, lse = ctx.saved_tensors
        dx, dw = torch.empty_like(x), torch.zeros_like(weight)
        db = torch.zeros_like(bias) if bias is not None else None
        for start in range(0, x.shape[0], HEAD_CHUNK_ROWS):
            rows = slice(start, start + HEAD_CHUNK_ROWS)
            logits = torch.addmm(bias, x[rows], weight.t()) if bias is not None else x[rows] @ weight.t()
            g = grad[rows, None]
            d_logits = logits.sub_(lse[rows, None]).exp_().mul_(-g)  # -g · softmax
            d_logits.scatter_add_(1, column[rows, None], g)  # + g at the target column
            torch.mm(d_logits, weight, out=dx[rows])
            dw.addmm_(d_logits.t(), x[rows])
            if db is not None:
                db += d_logits.sum(0)
        return dx, dw, db, None


def adaptive_target_log_probs(softmax: nn.AdaptiveLogSoftmaxWithLoss, x: torch.Tensor,
                              target: torch.Tensor) -> torch.Tensor:
    """``softmax(x, target).output``: log p(target) of every row (N,)."""
    if x.shape[0] != target.shape[0]:
        raise ValueError(f"{x.shape[0]} rows of input but {target.shape[0]} targets")
    if ((target < 0) | (target >= softmax.n_classes)).any():
        raise ValueError(f"targets must be in [0, {softmax.n_classes - 1}]")
    output = x.new_zeros(x.shape[0])
    head_column = target.clone()  # the word itself in the shortlist, else its cluster's entry
    bounds = [0] + list(softmax.cutoffs)
    for k in range(1, len(bounds) - 1):
        in_cluster = (target >= bounds[k]) & (target < bounds[k + 1])
        rows = in_cluster.nonzero().squeeze(1)
        if rows.numel() == 0:
            continue
        head_column[rows] = softmax.shortlist_size + k - 1
        cluster_logprob = torch.log_softmax(softmax.tail[k - 1](x.index_select(0, rows)), dim=1)
        local = cluster_logprob.gather(1, (target[rows] - bounds[k]).unsqueeze(1)).squeeze(1)
        output = output.index_copy(0, rows, local)
    return output + HeadLogProb.apply(x, softmax.head.weight, softmax.head.bias, head_column)
