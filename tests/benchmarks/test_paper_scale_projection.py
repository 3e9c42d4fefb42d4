"""The paper-scale cost model's projection (``benchmarks.paper_scale_report``) and its biLM fine-tuning
pass (§3.4, A.1: SQuAD and SNLI read a biLM first trained further on the task's text)."""

from types import SimpleNamespace

import pytest

from benchmarks.paper_scale import finetune_rate
from benchmarks.paper_scale_report import projection, report
from elmo_core.pretrain import build_parser


def _measured(task: str, finetune: dict | None) -> dict:
    m = {
        "task": task,
        "sample_examples": 10,
        "sample_texts": 10,
        "sample_tokens": 100,
        "bilm_tokens_per_s": 200.0,
        "cache_bytes_per_token": {"float32": 12288.0, "float16": 6144.0},
        "cache_planned_over_written": {"float32": 1.0, "float16": 1.0},
        "s_per_update_elmo": 2.0,
        "s_per_update_baseline": 1.0,
        "examples_per_update": 32.0,
        "max_epochs": 10,
        "peak_rss_mb": 1000.0,
        "full": {"name": f"{task} train", "examples": 3200, "texts": 4000, "tokens": 720_000, "source": "counted"},
    }
    if finetune:
        m["finetune"] = finetune
    return m


def test_the_fine_tuning_pass_is_projected_over_the_distinct_texts_and_counted_in_the_verdicts(tmp_path):
    tuned = _measured("qa", {"tokens_per_s": 100.0, "epochs": 2, "rows": 128, "unroll_steps": 20, "vocabulary": 9})
    plain = _measured("ner", None)
    p = projection(tuned)
    assert p["finetune_hours"] == pytest.approx(720_000 * 2 / 100.0 / 3600)  # 4 h
    assert p["bilm_hours"] == pytest.approx(1.0) and p["paper_hours_elmo"] == pytest.approx(100 * 2.0 * 10 / 3600)
    assert projection(plain)["finetune_hours"] == 0.0
    args = SimpleNamespace(argv=[], device="cpu", threads=1, out=tmp_path / "r.md")
    text = report([tuned, plain], args, "a biLM", "2026-11-25")
    measured_qa, projected_qa = [line for line in text.splitlines() if line.startswith("| qa |")]
    assert "| 100 |" in measured_qa and "| 4.0 |" in projected_qa
    measured_ner, projected_ner = [line for line in text.splitlines() if line.startswith("| ner |")]
    assert "| - |" in measured_ner and "| - |" in projected_ner
    verdict = next(line for line in text.splitlines() if line.startswith("- qa:"))
    hours = p["finetune_hours"] + p["bilm_hours"] + p["paper_hours_elmo"]
    assert f"{hours:.0f} h" in verdict  # 4 + 1 + 0.56: 6 h, not the 2 h without fine-tuning


def test_fine_tuning_rate_is_measured_with_the_fine_tuning_commands_own_settings(bilm_files):
    options, _ = bilm_files
    sentences = [["The", "cat", "sat", "."], ["A", "dog", "ran", "home", "."]]
    r = finetune_rate(options, sentences, updates=1, device="cpu")
    defaults = build_parser().parse_args(["--train", "-", "--out", "-"])
    assert (r["rows"], r["unroll_steps"]) == (defaults.batch_size, defaults.unroll_steps)
    assert r["tokens_per_s"] > 0 and r["vocabulary"] > 1000  # the shipped vocabulary's softmax
