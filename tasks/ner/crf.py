"""A linear-chain CRF whose impossible BIOUL transitions are forbidden in decoding (the paper's NER
baseline uses "constrained Viterbi decoding", appendix A.7) and, unless ``constrain_training`` is
off, in training too (allennlp's ``ConditionalRandomField`` applies its constraints to Viterbi only,
so its likelihood counts the impossible paths as well). Built on
``pytorch-crf``: the learned scores are kept in ``free_*`` parameters and the library's
``transitions``/``start_transitions``/``end_transitions`` become the scores plus a fixed mask."""

from __future__ import annotations

import torch
from torch import nn
from torchcrf import CRF

from .tags import allowed_transitions, can_end, can_start

FORBIDDEN = -10000.0


class ConstrainedCRF(CRF):
    def __init__(self, labels: list[str], constrain_training: bool = True):
        super().__init__(len(labels), batch_first=True)
        self.constrain_training = constrain_training
        self._masked = True
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

    def forward(self, emissions, tags, mask=None, reduction="mean"):
        """The log-likelihood of ``tags``, over the allowed paths only when ``constrain_training``."""
        self._masked = self.constrain_training
        try:
            return super().forward(emissions, tags, mask, reduction)
        finally:
            self._masked = True

    @property
    def transitions(self) -> torch.Tensor:
        return self.free_transitions + self.transition_mask if self._masked else self.free_transitions

    @property
    def start_transitions(self) -> torch.Tensor:
        return self.free_start_transitions + self.start_mask if self._masked else self.free_start_transitions

    @property
    def end_transitions(self) -> torch.Tensor:
        return self.free_end_transitions + self.end_mask if self._masked else self.free_end_transitions
