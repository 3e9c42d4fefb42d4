"""Static word vectors (the paper's baselines start from GloVe/Senna, §4 and appendix A): the two file
formats read the same, malformed files stop at file:line, the builder repeats exactly on one worker, and a
model's word embedding takes the vectors where it has them and xavier_uniform elsewhere."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import static_vectors
from static_vectors import SHIPPED_VECTORS, shipped_vectors
from static_vectors.build import Word2VecSettings, build
from static_vectors.store import read_hdf5, rows_for, write_hdf5
from suite_common.errors import ConfigError, DataError
from tasks.common.config import WordModelConfig
from tasks.common.layers import TokenEmbedder

WORDS = ["@@PADDING@@", "@@UNKNOWN@@", "the", "The", "cat", "unseen"]


def glove_text(tmp_path, lines, name="vec.txt"):
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_text_and_hdf5_give_the_same_rows_matched_by_case(tmp_path):
    text = glove_text(tmp_path, ["the 0.5 -1", "cat 2 3.25", "dog 1 1"])
    words, vectors = ["the", "cat", "dog"], np.array([[0.5, -1], [2, 3.25], [1, 1]], dtype=np.float32)
    h5 = tmp_path / "vec.hdf5"
    write_hdf5(h5, words, vectors)
    assert read_hdf5(h5)[0] == words
    for path in (text, h5):
        rows, dim = rows_for(path, WORDS)
        assert dim == 2 and [r is not None for r in rows] == [False, False, True, False, True, False]
        assert rows[2].tolist() == [0.5, -1.0] and rows[4].tolist() == [2.0, 3.25]


def test_a_word2vec_header_is_skipped_and_windows_line_ends_read(tmp_path):
    path = tmp_path / "w2v.txt"
    path.write_bytes(b"2 3\r\nthe 1 2 3\r\ncat 4 5 6\r\n")
    rows, dim = rows_for(path, WORDS)
    assert dim == 3 and rows[4].tolist() == [4, 5, 6]


@pytest.mark.parametrize(
    "lines, message",
    [
        (["the 0.1 0.2", "cat 0.1 abc"], r"vec.txt:2: 'abc' is not a number \(word 'cat'\)"),
        (["the 0.1 0.2", "cat 0.1"], r"vec.txt:2: expected 2 values, got 1"),
        (["the 0.1 nan"], r"vec.txt:1: a value that is not a finite number"),
        ([], r"vec.txt: empty vectors file"),
    ],
)
def test_a_malformed_text_file_is_one_line_naming_file_and_line(tmp_path, lines, message):
    path = glove_text(tmp_path, lines)
    with pytest.raises(DataError, match=message):
        rows_for(path, WORDS)


def test_a_file_that_is_not_a_vectors_hdf5_is_named(tmp_path):
    path = tmp_path / "x.hdf5"
    path.write_bytes(b"not hdf5")
    with pytest.raises(DataError, match="x.hdf5: not a readable HDF5 vectors file"):
        rows_for(path, WORDS)


def test_the_word_embedding_takes_the_vectors_and_xavier_uniform_elsewhere(tmp_path, capsys):
    path = glove_text(tmp_path, ["the 0.5 -1", "cat 2 3", "@@PADDING@@ 9 9"])
    torch.manual_seed(0)
    embedder = TokenEmbedder(WORDS, 2, 4, 0, 3, vectors=str(path), freeze_vectors=True)
    w = embedder.word.weight.detach()
    assert w[2].tolist() == [0.5, -1.0] and w[4].tolist() == [2.0, 3.0]
    assert w[0].abs().sum() == 0  # padding stays zero even where the file has the word
    assert w[[1, 3, 5]].abs().max() <= math.sqrt(6 / (len(WORDS) + 2))  # xavier_uniform's bound
    assert not embedder.word.weight.requires_grad
    assert "pretrained vectors (frozen): 2 of 5 words found" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="vectors have 2 dimensions, task.model.word_dim is 3"):
        TokenEmbedder(WORDS, 3, 4, 0, 3, vectors=str(path))


def test_shipped_names_the_shipped_file_of_the_word_dim_or_none(tmp_path, monkeypatch):
    monkeypatch.setattr(static_vectors, "ROOT", tmp_path)
    (tmp_path / "lm-text").mkdir()
    write_hdf5(tmp_path / "lm-text" / "vectors_2d.hdf5", ["the"], np.ones((1, 2), dtype=np.float32))
    assert static_vectors.shipped_dims() == [2]
    assert shipped_vectors(2) == str(tmp_path / "lm-text" / "vectors_2d.hdf5") and shipped_vectors(3) is None
    assert WordModelConfig(word_dim=2).vectors == SHIPPED_VECTORS
    assert WordModelConfig(word_dim=2).vectors_file == shipped_vectors(2)
    assert WordModelConfig(word_dim=3).vectors_file is None
    assert WordModelConfig(word_dim=2, vectors=None).vectors_file is None


def test_the_build_repeats_exactly_on_one_worker_and_resumes(tmp_path, capsys):
    """Two builds of the same text and seed give the same bytes; a built size is kept on a second call."""
    pytest.importorskip("gensim")
    text = tmp_path / "shared" / "data" / "lm_corpus" / "train"
    text.mkdir(parents=True)
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(60)]
    sentences = [" ".join(rng.choice(vocabulary, size=12)) for _ in range(400)]
    (text / "a.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    settings = Word2VecSettings(epochs=2, min_count=1)
    first = build(tmp_path / "shared", tmp_path / "one", [8], settings, keep=50, force=False)
    second = build(tmp_path / "shared", tmp_path / "two", [8], settings, keep=50, force=False)
    assert (tmp_path / "one" / "vectors_8d.hdf5").read_bytes() == (tmp_path / "two" / "vectors_8d.hdf5").read_bytes()
    assert first["8d"]["words_kept"] == 50 and first["8d"]["corpus_tokens"] == 400 * 12
    assert first["8d"]["intrinsic"] == second["8d"]["intrinsic"]
    build(tmp_path / "shared", tmp_path / "one", [8], settings, keep=50, force=False)
    assert "built already with these settings" in capsys.readouterr().err
    with pytest.raises(DataError, match="no biLM text found"):
        build(tmp_path / "nowhere", tmp_path / "three", [8], settings, keep=50, force=False)
