"""The biLM reproduces the original implementation's outputs (bilm-tf test fixture)."""

import json

import h5py
import numpy as np
import torch

from elmo_core import batch_to_ids, load_bilm
from elmo_core.embed import main as embed_main


def _fixture(bilm_tf):
    sentences = json.loads((bilm_tf / "lm_embeddings_sentences.json").read_text())
    expected = []
    for k in range(3):
        with h5py.File(bilm_tf / f"lm_embeddings_{k}.hdf5", "r") as f:
            expected.append([np.concatenate([f[str(i)][0], f[str(i)][1]], axis=-1) for i in range(10)])
    return sentences, expected


def test_stateful_api_matches_original(bilm_tf):
    sentences, expected = _fixture(bilm_tf)
    bilm = load_bilm(bilm_tf / "options.json", bilm_tf / "lm_weights.hdf5", stateful=True)
    with torch.no_grad():
        for i in range(10):  # batch i = row k holds sentences[k][i]; states carried between batches
            batch = [sentences[k][i].split() for k in range(3)]
            out = bilm(batch_to_ids(batch))
            assert out.mask.sum(1).tolist() == [len(s) for s in batch]
            for k in range(3):
                np.testing.assert_allclose(out.layers[2, k, : len(batch[k])].numpy(), expected[k][i], atol=1e-5)


def test_stateless_differs_from_stateful_after_first_batch(bilm_tf):
    sentences, expected = _fixture(bilm_tf)
    bilm = load_bilm(bilm_tf / "options.json", bilm_tf / "lm_weights.hdf5", stateful=False)
    with torch.no_grad():
        first = bilm(batch_to_ids([sentences[k][0].split() for k in range(3)]))
        second = bilm(batch_to_ids([sentences[k][1].split() for k in range(3)]))
    n0, n1 = len(sentences[0][0].split()), len(sentences[0][1].split())
    # the first batch starts from zero state in both modes
    np.testing.assert_allclose(first.layers[2, 0, :n0].numpy(), expected[0][0], atol=1e-5)
    assert np.abs(second.layers[2, 0, :n1].numpy() - expected[0][1]).max() > 1e-3


def test_embed_command_matches_original(bilm_tf, tmp_path):
    sentences, expected = _fixture(bilm_tf)
    order = [(k, i) for i in range(10) for k in range(3)]  # file order = batch after batch
    (tmp_path / "in.txt").write_text("\n".join(sentences[k][i] for k, i in order) + "\n")
    embed_main(
        [
            "--options",
            str(bilm_tf / "options.json"),
            "--weights",
            str(bilm_tf / "lm_weights.hdf5"),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "out.hdf5"),
            "--batch-size",
            "3",
            "--stateful",
            "--no-progress",
        ]
    )
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        index = json.loads(f["sentence_to_index"][0])
        assert len(index) == 30
        for n, (k, i) in enumerate(order):
            layers = f[str(n)][...]
            assert layers.shape == (3, len(sentences[k][i].split()), 32) and layers.dtype == np.float32
            np.testing.assert_allclose(layers[2], expected[k][i], atol=1e-5)
            # layer 0 is the token layer duplicated for both directions
            np.testing.assert_array_equal(layers[0, :, :16], layers[0, :, 16:])
