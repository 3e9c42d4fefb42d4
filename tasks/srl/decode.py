"""Viterbi decoding of per-token tag scores constrained to valid BIO sequences (He et al. 2017,
used by the paper's SRL model, appendix A.5): I-X may only follow B-X or I-X, and no sequence
starts with I-X."""

from __future__ import annotations

import torch

NEG = float("-inf")


def bio_constraints(labels: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """(K, K) transition mask (0 allowed, -inf forbidden) and (K,) start mask."""
    K = len(labels)
    trans = torch.zeros(K, K)
    start = torch.zeros(K)
    for j, b in enumerate(labels):
        if b.startswith("I-"):
            start[j] = NEG
            for i, a in enumerate(labels):
                if a[2:] != b[2:] or a == "O":
                    trans[i, j] = NEG
    return trans, start


def viterbi(scores: torch.Tensor, trans: torch.Tensor, start: torch.Tensor) -> list[int]:
    """Best tag sequence for ``scores`` (T, K) (e.g. log-probabilities) under the constraints."""
    T, K = scores.shape
    best = scores[0] + start
    back = []
    for t in range(1, T):
        total = best.unsqueeze(1) + trans  # (from, to)
        best, arg = total.max(dim=0)
        best = best + scores[t]
        back.append(arg)
    path = [int(best.argmax())]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return path[::-1]
