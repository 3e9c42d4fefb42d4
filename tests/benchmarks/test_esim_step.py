"""The ESIM step benchmark counts each step's arithmetic with torch's counter and prints its rate beside the peak."""

from __future__ import annotations

import re

from conftest import shared_path


def test_esim_step_prints_the_counted_rate_and_its_fraction_of_the_peak(capsys, monkeypatch):
    from benchmarks import esim_step

    monkeypatch.setattr(esim_step, "SICK_TRAIN", shared_path("data/nli_sick/train.tsv"))
    asked = []
    monkeypatch.setattr(
        esim_step, "matmul_peak_flops", lambda s: asked.append(s) or 1e12
    )  # a fixed peak (checked below)
    assert esim_step.main(["--steps", "2", "--hidden", "16", "--word-dim", "8", "--peak-seconds", "0.5"]) == 0
    assert asked == [0.5]
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


def test_a_short_peak_measurement_stops_at_the_size_that_outlasts_it(monkeypatch):
    """``--peak-seconds``: the peak is measured at the sizes one multiplication of which fits the time asked."""
    import torch

    from benchmarks.bilm_speed import matmul_peak_flops

    sizes = []
    real_mm = torch.mm
    monkeypatch.setattr(torch, "mm", lambda a, b: sizes.append(a.shape[0]) or real_mm(a[:64, :64], b[:64, :64]))
    assert matmul_peak_flops(0.0) > 0  # every multiplication outlasts no time: the first size alone is measured
    assert set(sizes) == {1024, 2048} and sizes[-1] == 2048 and sizes.count(2048) == 1
