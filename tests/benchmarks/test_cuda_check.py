"""The CUDA check's own logic without a GPU: its differences, its page, its refusal without CUDA
(benchmarks/cuda_check.py)."""

import json

import numpy as np
import pytest
import torch

from benchmarks import cuda_check


def test_layer_differences_are_the_largest_absolute_and_relative_gap_per_layer():
    a = [np.array([[[1.0, -4.0]], [[2.0, 2.0]]]), np.array([[[0.5, 0.0]], [[1.0, 1.0]]])]
    b = [np.array([[[1.0, -3.5]], [[2.0, 2.0]]]), np.array([[[0.5, 0.1]], [[1.0, 1.25]]])]
    rows = cuda_check.layer_differences(a, b)
    assert [r["max_abs_diff"] for r in rows] == pytest.approx([0.5, 0.25])
    assert [r["relative"] for r in rows] == pytest.approx([0.5 / 4.0, 0.25 / 2.0])


def test_the_page_shows_every_layer_and_run_and_where_the_numbers_came_from(tmp_path):
    rows = [{"layer": k, "max_abs_diff": 1e-6 * (k + 1), "relative": 1e-7} for k in range(3)]
    run = lambda losses: {"losses": losses, "last": losses[-1], "max_abs_diff": 0.0, "steps_within_1e-3": 2}
    report = {
        "command": "python -m benchmarks.cuda_check",
        "device": "GPU",
        "cpu": "CPU, 4 CPUs",
        "torch": "2.x",
        "dates": ["2026-01-01T00:00:00+00:00", "2026-01-01T00:01:00+00:00"],
        "embed_small": {"float32": rows, "default": rows},
        "embed_paper_size": {"float32": rows},
        "pretrain": {"cpu plain": run([9.0, 8.0]), "cuda plain": run([9.0, 7.5])},
    }
    saved = tmp_path / "check.json"
    saved.write_text(json.dumps(report))
    assert cuda_check.main(["--render", str(saved), "--markdown", str(tmp_path / "check.md")]) == 0
    page = (tmp_path / "check.md").read_text()
    assert "| small (embedded) | default | 1.0e-06 (1.0e-07) | 2.0e-06 (1.0e-07) | 3.0e-06 (1.0e-07) |" in page
    assert "| cuda plain | 9.00000 | 7.50000 | 0.0e+00 | 2 of 2 |" in page
    assert "2026-01-01T00:00:00+00:00 to 2026-01-01T00:01:00+00:00" in page and "GPU with CPU, 4 CPUs" in page


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal where no CUDA device is")
def test_without_a_cuda_device_it_says_so_and_runs_nothing(capsys):
    assert cuda_check.main(["--device", "cuda"]) == 2
    assert "no CUDA device" in capsys.readouterr().err
