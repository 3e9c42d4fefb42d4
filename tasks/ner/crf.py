"""A linear-chain CRF whose impossible BIOUL transitions are forbidden in training and decoding
(the paper's NER baseline uses "constrained Viterbi decoding", appendix A.7). Built on
``pytorch-crf``: the learned scores are kept in ``free_*`` parameters and the library's
``transitions``/``start_transitions``/``end_transitions`` become the scores plus a fixed mask."""

from __future__ import annotations

import torch
from torch import nn
from torchcrf import CRF

from .tags import allowed_transitions, can_end, can_start

FORBIDDEN = -10000.0


class ConstrainedCRF(CRF):
    def __init__(self, labels: list[str]):
        super().__init__(len(labels), batch_first=True)
        n = len(labels)
        for name in ("transitions", "start_transitions", "end_transitions"):
            value = getattr(self, name).data
            del self._parameters[name]
            self.register_parameter("free_" + name, nn.Parameter(value))
        mask = torch.full((n, n), FORBIDDEN)
        for i, j in allowed_transitions(labels):
            mask[i, j] = 0.0
        self.register_buffer("transition_mask", mask)
        self.register_buffer("start_mask", torch.tensor([0.0 if can_start(t) else FORBIDDEN for t in labels]))
        self.register_buffer("end_mask", torch.tensor([0.0 if can_end(t) else FORBIDDEN for t in labels]))

    @property
    def transitions(self) -> torch.Tensor:
        return self.free_transitions + self.transition_mask

    @property
    def start_transitions(self) -> torch.Tensor:
        return self.free_start_transitions + self.start_mask

    @property
    def end_transitions(self) -> torch.Tensor:
        return self.free_end_transitions + self.end_mask
