"""Choosing the biLM's size (elmo_core.size_pilots), batches assembled by worker processes
(lm_prefetch) and the training step's distinct-token grouping: each against its plain form."""

import gzip
import json

import numpy as np
import pytest
from conftest import shared_path

from elmo_core.pretraining import lm_fast_step
from elmo_core.pretraining.lm_data import LMStream, Vocabulary
from elmo_core.pretraining.lm_prefetch import prefetched_batches
from elmo_core.size_pilots import fit_learning_curve, predicted_loss
from elmo_core.size_pilots import main as size_pilots_main


def _same(a, b):
    return all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("forward_chars", "forward_targets", "backward_chars", "backward_targets", "lengths")
    )


@pytest.mark.parametrize("workers,skip", [(2, 0), (3, 5)])
def test_worker_processes_give_the_same_batches_in_the_same_order(workers, skip):
    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    stream = LMStream([corpus], Vocabulary.build([corpus], 1), 3, 4, seed=2)
    plain = list(stream.batches(1, skip))
    ahead = list(prefetched_batches(stream, 1, skip, workers))
    assert len(plain) == len(ahead) > workers
    assert all(_same(a, b) for a, b in zip(plain, ahead))


def test_distinct_rows_group_as_the_exact_comparison_does(monkeypatch):
    rng = np.random.default_rng(0)
    words = rng.integers(0, 5, size=(300, 6))  # many repeated rows
    keys = words.view(np.dtype((np.void, 8 * 6))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    for weights in (lm_fast_step._ROW_HASH, np.zeros_like(lm_fast_step._ROW_HASH)):  # zeros: every row collides
        monkeypatch.setattr(lm_fast_step, "_ROW_HASH", weights)
        f, inv = lm_fast_step._distinct_rows(words)
        assert len(f) == len(first)
        assert np.array_equal(words[f][inv.reshape(-1)], words)
        # the same partition of the rows (numbering may differ)
        assert len(set(zip(inv.reshape(-1).tolist(), inverse.reshape(-1).tolist()))) == len(first)


def test_learning_curve_fit_recovers_a_power_law():
    t = np.linspace(1, 600, 400)
    loss = 4.0 + 6.0 * t**-0.3 + np.random.default_rng(1).normal(0, 0.01, t.shape)
    fit = fit_learning_curve(t, loss)
    assert abs(fit["c"] - 0.3) < 0.06 and abs(predicted_loss(fit, 3000) - (4.0 + 6.0 * 3000**-0.3)) < 0.05
    flat = fit_learning_curve(t, np.full_like(t, 5.0))
    assert flat["b"] == pytest.approx(0.0, abs=1e-9) and predicted_loss(flat, 1e4) == pytest.approx(5.0)


def test_pilots_choose_a_size_and_continue_it(tmp_path, capsys):
    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    vocab = Vocabulary.build([corpus], 1)
    vocab.save(tmp_path / "vocab.txt")
    common = [
        "--preset",
        "tiny",
        "--train",
        str(corpus),
        "--heldout",
        str(corpus),
        "--vocab",
        str(tmp_path / "vocab.txt"),
    ]
    common += ["--batch-size", "4", "--unroll-steps", "5", "--device", "cpu", "--threads", "1"]
    argv = ["--cells", "8", "16", "--pilot-minutes", "0.04", "--total-minutes", "0.12", "--out", str(tmp_path / "p")]
    size_pilots_main(argv + common + ["--rate-minutes", "0.01"])
    report = json.loads((tmp_path / "p/pilots.json").read_text())
    assert [p["cells"] for p in report["pilots"]] == [8, 16]
    for p in report["pilots"]:  # read at the tokens its rate alone gives in the total time
        assert p["tokens_per_second_alone"] > 0
        assert abs(p["tokens_at_total"] - p["tokens_per_second_alone"] * 0.12 * 60) <= 8  # both rounded
    best = min(report["pilots"], key=lambda p: p["predicted_loss_at_total"])
    assert report["chosen_cells"] == best["cells"]
    chosen = tmp_path / f"p/cells-{best['cells']}"
    pilot_updates = json.loads((chosen / "pilot_summary.json").read_text())["progress"]["step"]
    assert report["long_run"]["progress"]["step"] > pilot_updates  # resumed, not restarted
    assert "Chosen:" in (tmp_path / "p/pilots.md").read_text()
    # too large for the repository: refused before anything trains
    with pytest.raises(SystemExit, match="over --max-weights-mb"):
        size_pilots_main(argv[:-1] + [str(tmp_path / "q"), "--max-weights-mb", "0.01"] + common)
    assert not (tmp_path / "q/cells-8").exists()


def test_pilots_without_a_vocabulary_share_one_built_from_all_the_training_text(tmp_path):
    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    packed = tmp_path / "more.txt.gz"
    packed.write_bytes(gzip.compress(b"zebra quagga okapi\nzebra quagga\n"))
    argv = ["--cells", "8", "16", "--pilot-minutes", "0.02", "--total-minutes", "0.04", "--out", str(tmp_path / "p")]
    argv += ["--preset", "tiny", "--train", str(corpus), str(packed), "--heldout", str(corpus), "--min-count", "2"]
    size_pilots_main(argv + ["--batch-size", "4", "--unroll-steps", "5", "--device", "cpu", "--threads", "1"])
    built = (tmp_path / "p/vocab.txt").read_text()
    Vocabulary.build([corpus, packed], 2).save(tmp_path / "expected.txt")
    assert built == (tmp_path / "expected.txt").read_text()
    assert "zebra" in built.split() and "okapi" not in built.split()  # counted in the .gz file, cut at 2
    for cells in (8, 16):  # every pilot trained on that one vocabulary
        assert (tmp_path / f"p/cells-{cells}/vocab.txt").read_text() == built
