"""Stateless inference with sentences laid end to end in LSTM rows (elmo_core.row_packing)."""

import numpy as np
import pytest
import torch
from conftest import random_bilm

from elmo_core import batch_to_ids
from elmo_core.embed import embed_sentences, row_groups
from elmo_core.row_packing import forward_in_rows, row_layout

WORDS = ["the", "cat", "sat", "on", "a", "mat", "Über", "naïve", "x" * 70, "."]


def random_sentences(n, seed=0, max_len=14):
    rng = np.random.default_rng(seed)
    return [list(rng.choice(WORDS, size=int(k))) for k in rng.integers(1, max_len, size=n)]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"lstm__use_skip_connections": False, "char_cnn__activation": "tanh"},
        {"lstm__projection_dim": 18, "lstm__n_layers": 3},
    ],
)
@pytest.mark.parametrize("rows", [1, 4, 33, 60, 100])
def test_rows_give_the_stateless_forward(overrides, rows):
    bilm = random_bilm(**overrides)
    sentences = random_sentences(60) + [["one"]]
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        expected = bilm(ids)
        got = forward_in_rows(bilm, ids, rows)
    assert torch.equal(got.mask, expected.mask)
    assert got.layers.shape == expected.layers.shape
    assert torch.allclose(got.layers, expected.layers, atol=1e-6)
    assert (got.layers[:, ~got.mask] == 0).all()  # padding and the removed boundaries are zero


def test_rows_are_balanced_and_reset_at_each_sentence():
    lengths = [int(n) for n in np.random.default_rng(1).integers(3, 40, size=200)]
    T = max(lengths)
    layout = row_layout(lengths, 16, T)
    assert sum(layout.batch_sizes) == sum(lengths)
    assert layout.batch_sizes == sorted(layout.batch_sizes, reverse=True)
    # longest-first onto the shortest row: the rows end within one sentence of each other
    steps = len(layout.batch_sizes)
    assert steps - sum(b == 16 for b in layout.batch_sizes) < max(lengths)
    assert steps <= sum(lengths) / 16 + max(lengths)
    # every token is read exactly once, in sentence order forwards and reversed backwards
    assert sorted(layout.forward_index.tolist()) == sorted(s * T + t for s, n in enumerate(lengths) for t in range(n))
    assert sorted(layout.backward_index.tolist()) == sorted(layout.forward_index.tolist())
    # one reset per sentence that does not open its row
    assert sum(int((m == 0).sum()) for m in layout.resets.values()) == len(lengths) - 16
    with pytest.raises(ValueError, match="rows must be at least 1"):
        row_layout(lengths, 0, T)


def test_row_groups_cover_every_sentence_once_within_the_token_budget():
    lengths = [int(n) for n in np.random.default_rng(2).integers(1, 60, size=1000)]
    groups = row_groups(lengths, rows=32, steps=40)
    assert sorted(i for g in groups for i in g) == list(range(1000))
    assert all(len(g) >= 32 for g in groups)
    longest = max(lengths) + 2
    assert all(sum(lengths[i] + 2 for i in g) <= 32 * 40 + longest for g in groups)
    assert row_groups([], 8) == []
    assert row_groups([3, 4], 8) == [[1, 0]]


def test_embed_sentences_stateless_uses_rows_and_matches_forward():
    bilm = random_bilm()
    sentences = random_sentences(45, seed=3)
    with torch.no_grad():
        expected = bilm(batch_to_ids(sentences)).layers
    got = dict(embed_sentences(bilm, sentences, batch_size=8, progress=False))
    assert sorted(got) == list(range(len(sentences)))
    for i, s in enumerate(sentences):
        np.testing.assert_allclose(got[i], expected[:, i, : len(s)].numpy(), atol=1e-6)


def test_forward_in_rows_refuses_a_stateful_bilm():
    bilm = random_bilm()
    bilm.stateful = True
    with pytest.raises(ValueError, match="stateless"):
        forward_in_rows(bilm, batch_to_ids([["a"]]), 4)
