"""The POS probe's model (Peters et al. 2018 §5.3, Table 6): one linear classifier on each frozen
encoder layer, and one on the layers' learned mix (the run's ``elmo.*`` mix at ``position=probe``),
trained side by side on the same batches. The heads share nothing, so their summed loss trains each
as if alone (Adam's steps are per parameter; the probe's profile turns gradient clipping off)."""

from __future__ import annotations

import torch
from torch import nn

from suite_common.errors import ConfigError

from ..common.layers import TaskModel


class LayerProbe(TaskModel):
    gold_keys = ("tags",)

    def __init__(self, labels: list[str], features):
        super().__init__()
        if features.position != "probe":
            raise ConfigError(
                f"the POS probe reads the encoder's layers itself (elmo.position=paper); got "
                f"elmo.position={features.position}"
            )
        self.features = features
        self.heads = nn.ModuleList(nn.Linear(features.dim, len(labels)) for _ in range(features.num_layers + 1))
        self.names = [str(layer) for layer in range(features.num_layers)] + ["mix"]

    def scores(self, batch: dict) -> torch.Tensor:
        """Each head's tag scores, (heads, batch, words, tags): one per layer, the mix's last."""
        layers = batch["layers"]  # (layers, batch, words, dim)
        inputs = [*layers, self.features(batch)["probe"]]
        return torch.stack([head(x) for head, x in zip(self.heads, inputs, strict=True)])

    def loss_of(self, scores: torch.Tensor, batch: dict) -> torch.Tensor:
        mask, tags = batch["mask"], batch["tags"]
        return sum(nn.functional.cross_entropy(s[mask], tags[mask]) for s in scores)

    def decode(self, scores: torch.Tensor, batch: dict) -> list[dict[str, list[int]]]:
        """Per sentence, each head's tag indices (``{"0": [...], ..., "mix": [...]}``)."""
        best, lengths = scores.argmax(-1), batch["mask"].sum(1).tolist()
        return [{name: best[h, i, :n].tolist() for h, name in enumerate(self.names)} for i, n in enumerate(lengths)]
