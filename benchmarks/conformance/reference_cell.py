"""Stored outputs of allennlp 2.10.1's ``AugmentedLstm`` (the highway LSTM layer allennlp-models' SRL tagger
stacks, after He et al. 2017; Peters et al. 2018 appendix A.5), for ``tests/tasks/test_reference_settings.py``
to check the suite's ``RecurrentHighwayLayer`` against without allennlp installed. Run in the harness's
environment:

    .venv-conformance/bin/python -m benchmarks.conformance.reference_cell

It draws the weights and a padded batch from a fixed seed, runs both directions, and writes them with the
outputs to ``tests/fixtures/augmented_lstm_allennlp.pt`` (tensors only)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "augmented_lstm_allennlp.pt"
INPUT, HIDDEN, LENGTHS = 7, 5, [6, 4, 2]


def main() -> int:
    from benchmarks.conformance.allennlp_launcher import install_stand_ins

    install_stand_ins()
    from allennlp.modules.augmented_lstm import AugmentedLstm

    torch.manual_seed(0)
    lengths = torch.tensor(LENGTHS)
    x = (
        torch.randn(len(LENGTHS), max(LENGTHS), INPUT)
        * (torch.arange(max(LENGTHS))[None] < lengths[:, None])[..., None]
    )
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
    stored = {"inputs": x, "lengths": lengths}
    for name, forward in (("forward", True), ("backward", False)):
        layer = AugmentedLstm(INPUT, HIDDEN, go_forward=forward, recurrent_dropout_probability=0.0, use_highway=True)
        layer.eval()
        with torch.no_grad():
            out = torch.nn.utils.rnn.pad_packed_sequence(layer(packed)[0], batch_first=True)[0]
        cell = layer.cell
        stored[name] = {
            "input_weight": cell.input_linearity.weight.detach().clone(),
            "input_bias": cell.input_linearity.bias.detach().clone(),
            "state_weight": cell.state_linearity.weight.detach().clone(),
            "state_bias": cell.state_linearity.bias.detach().clone(),
            "outputs": out,
        }
    torch.save(stored, OUT)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
