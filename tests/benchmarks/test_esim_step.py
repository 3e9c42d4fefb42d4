"""The ESIM step benchmark counts each step's arithmetic with torch's counter and prints its rate beside the peak."""

from __future__ import annotations

import re

from conftest import shared_path


def test_esim_step_prints_the_counted_rate_and_its_fraction_of_the_peak(capsys, monkeypatch):
    from benchmarks import esim_step

    monkeypatch.setattr(esim_step, "SICK_TRAIN", shared_path("data/nli_sick/train.tsv"))
    monkeypatch.setattr(esim_step, "matmul_peak_flops", lambda: 1e12)  # a fixed peak: the fraction is checked below
    assert esim_step.main(["--steps", "2", "--hidden", "16", "--word-dim", "8"]) == 0
    out = capsys.readouterr().out
    rate = float(re.search(r"counted arithmetic ([\d.]+) GFLOP/s", out).group(1))
    fraction = float(re.search(r"runs at ([\d.]+) % of it", out).group(1))
    assert rate > 0 and abs(fraction - rate / 1000 * 100) < 0.1


def test_the_counted_arithmetic_grows_with_the_sentences():
    import torch

    from benchmarks.esim_step import Esim, NliModelConfig, NoElmo, SimpleNamespace, counted_flops, side

    torch.manual_seed(0)
    model = Esim([f"w{i}" for i in range(40)], 3, SimpleNamespace(model=NliModelConfig(word_dim=8, hidden=8)), NoElmo())
    short = {"premise": side([3, 2], 40), "hypothesis": side([2, 2], 40), "label": torch.tensor([0, 1])}
    long = {"premise": side([6, 4], 40), "hypothesis": side([4, 4], 40), "label": torch.tensor([0, 1])}
    assert 0 < counted_flops(model, short) < counted_flops(model, long)
