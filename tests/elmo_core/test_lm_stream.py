"""The biLM's training stream (§3.1): interleaved sources in corpus proportions, exact resume,
the original file-at-a-time order kept as an option, and the per-source held-out split."""

import gzip
import json

import numpy as np
import pytest

from elmo_core.pretraining.lm_data import (
    CorpusError,
    LMStream,
    Vocabulary,
    heldout_sources,
    read_sentences,
    why_no_sources,
)

SIZES = {"news": 600, "reviews": 300, "speeches": 100}  # sentences per source: 60 % / 30 % / 10 %


@pytest.fixture
def corpus(tmp_path):
    rng = np.random.default_rng(0)
    files = []
    for name, n in SIZES.items():
        lines = [" ".join(f"{name}{w}" for w in rng.integers(0, 20, rng.integers(3, 12))) for _ in range(n)]
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines[: n // 2]) + "\n\n" + "\n".join(lines[n // 2 :]) + "\n")  # a blank line too
        files.append(path)
    return files


def _source_shares(stream, epoch=0, window=8):
    """Per window of ``window`` batches: the share of each source among the predicted words."""
    vocab = stream.vocab
    source_of = np.array([next((k for k, name in enumerate(SIZES) if w.startswith(name)), -1) for w in vocab.words])
    shares, counts = [], np.zeros(len(SIZES))
    for i, batch in enumerate(stream.batches(epoch)):
        targets = batch.forward_targets[batch.forward_targets >= 0]
        kinds = source_of[targets]
        counts += np.bincount(kinds[kinds >= 0], minlength=len(SIZES))
        if (i + 1) % window == 0:
            shares.append(counts / counts.sum())
            counts = np.zeros(len(SIZES))
    return np.array(shares)


def _token_shares(files):
    tokens = np.array([sum(len(s) for s in read_sentences(f)) for f in files], dtype=float)
    return tokens / tokens.sum()


def test_interleaved_stream_mixes_sources_in_corpus_proportions(corpus):
    vocab = Vocabulary.build(corpus, 1)
    expected = _token_shares(corpus)
    for seed in range(3):
        shares = _source_shares(LMStream(corpus, vocab, 16, 10, seed=seed))
        assert len(shares) >= 4
        # every window of 8 batches (~1,300 words, ~190 sentences; sampling std of a share
        # about 0.035) is within 0.12 of the corpus share of every source
        assert np.abs(shares - expected).max() < 0.12, (shares, expected)
        # the original order reads one file at a time: some window is (nearly) one source
        single = _source_shares(LMStream(corpus, vocab, 16, 10, seed=seed, order="files"))
        assert np.abs(single - expected).max() > 0.35


def test_interleaved_stream_reads_every_sentence_once_and_resumes_exactly(corpus):
    vocab = Vocabulary.build(corpus, 1)
    stream = LMStream(corpus, vocab, 8, 10, seed=1)
    seen = sorted(" ".join(s) for s in stream.sentences(0))
    assert seen == sorted(" ".join(s) for f in corpus for s in read_sentences(f))
    batches = list(stream.batches(0))
    resumed = list(LMStream(corpus, vocab, 8, 10, seed=1).batches(0, skip=5))
    assert len(resumed) == len(batches) - 5
    for a, b in zip(batches[5:], resumed):
        assert np.array_equal(a.forward_targets, b.forward_targets)
        assert np.array_equal(a.backward_chars, b.backward_chars)
    # a pure function of (files, seed, epoch): epochs differ, seeds differ
    first = lambda s, e: [" ".join(x) for x, _ in zip(LMStream(corpus, vocab, 8, 10, seed=s).sentences(e), range(30))]
    assert first(1, 0) == first(1, 0) and first(1, 0) != first(1, 1) and first(1, 0) != first(2, 0)


def test_one_file_gives_the_same_stream_in_either_order(corpus):
    vocab = Vocabulary.build(corpus[:1], 1)
    a = [" ".join(s) for s in LMStream(corpus[:1], vocab, 4, 5, seed=2).sentences(1)]
    b = [" ".join(s) for s in LMStream(corpus[:1], vocab, 4, 5, seed=2, order="files").sentences(1)]
    assert a == b


def test_unknown_order_and_bad_utf8_are_errors(corpus, tmp_path):
    vocab = Vocabulary.build(corpus, 1)
    with pytest.raises(CorpusError, match="unknown stream order"):
        LMStream(corpus, vocab, 4, 5, order="random")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbad \xff byte\n")
    with pytest.raises(CorpusError, match=r"bad.txt:2: not valid UTF-8"):
        next(LMStream([bad], vocab, 4, 5).batches(0))


def test_heldout_split_by_source(tmp_path):
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("a b\nc d\n\ne f g\nh\n")
    assert heldout_sources(heldout) is None  # no stats.json
    (tmp_path / "stats.json").write_text(json.dumps({"x": {"heldout_sentences": 1}, "y": {"heldout_sentences": 3}}))
    assert heldout_sources(heldout) == {"x": [["a", "b"]], "y": [["c", "d"], ["e", "f", "g"], ["h"]]}
    (tmp_path / "stats.json").write_text(json.dumps({"x": {"heldout_sentences": 1}, "y": {"heldout_sentences": 2}}))
    with pytest.raises(CorpusError, match="add up to 3"):
        heldout_sources(heldout)
    (tmp_path / "stats.json").write_text(json.dumps({"x": {"tokens": 5}}))
    assert heldout_sources(heldout) is None  # an unrelated stats.json
    assert 'no "heldout_sentences" count' in why_no_sources([str(heldout)])
    assert "2 held-out files" in why_no_sources([str(heldout), str(heldout)])


def _gzipped(paths, tmp_path):
    out = []
    for path in paths:
        gz = tmp_path / "gz" / (path.name + ".gz")
        gz.parent.mkdir(exist_ok=True)
        gz.write_bytes(gzip.compress(path.read_bytes()))
        out.append(gz)
    return out


def test_gzip_files_give_the_same_vocabulary_and_batches_as_plain_ones(corpus, tmp_path):
    packed = _gzipped(corpus, tmp_path)
    vocab = Vocabulary.build(corpus, 1)
    assert Vocabulary.build(packed, 1).words == vocab.words
    assert read_sentences(packed[0]) == read_sentences(corpus[0])
    plain = list(LMStream(corpus, vocab, 8, 10, shuffle=False).batches(0))
    zipped = list(LMStream(packed, vocab, 8, 10, shuffle=False).batches(0))
    assert len(plain) == len(zipped)
    for a, b in zip(plain, zipped):
        assert np.array_equal(a.forward_chars, b.forward_chars)
        assert np.array_equal(a.backward_targets, b.backward_targets)
    # shuffled, a file's order is seeded by its name (here with ".gz"): the same sentences, and a resume
    # of the compressed stream repeats its batches exactly
    shuffled = LMStream(packed, vocab, 8, 10, seed=3)
    assert sorted(map(" ".join, shuffled.sentences(1))) == sorted(
        map(" ".join, LMStream(corpus, vocab, 8, 10, seed=3).sentences(1))
    )
    batches = list(shuffled.batches(1))
    for a, b in zip(batches[4:], LMStream(packed, vocab, 8, 10, seed=3).batches(1, skip=4)):
        assert np.array_equal(a.forward_targets, b.forward_targets)
    # plain and compressed files side by side, as the two shared corpora are read together
    mixed = LMStream([corpus[0], packed[1]], vocab, 8, 10, seed=0)
    assert sorted(map(" ".join, mixed.sentences(0))) == sorted(
        " ".join(s) for f in (corpus[0], corpus[1]) for s in read_sentences(f)
    )


def test_a_truncated_gzip_file_or_bad_utf8_inside_one_is_named(corpus, tmp_path):
    packed = _gzipped(corpus[:1], tmp_path)[0]
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed.read_bytes()[:-20])
    vocab = Vocabulary.build(corpus, 1)
    with pytest.raises(CorpusError, match=r"cut.txt.gz: not a complete gzip file"):
        next(LMStream([cut], vocab, 4, 5).batches(0))
    with pytest.raises(CorpusError, match=r"cut.txt.gz: not a complete gzip file"):
        Vocabulary.build([cut], 1)
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(gzip.compress(b"fine line\nbad \xff byte\n"))
    with pytest.raises(CorpusError, match=r"bad.txt.gz:2: not valid UTF-8"):
        Vocabulary.build([bad], 1)
    with pytest.raises(CorpusError, match=r"bad.txt.gz:2: not valid UTF-8"):
        next(LMStream([bad], vocab, 4, 5).batches(0))


def test_an_empty_file_gives_no_sentences(tmp_path, corpus):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    stream = LMStream([empty, corpus[2]], Vocabulary.build(corpus, 1), 4, 5)
    assert len(list(stream.sentences(0))) == len(read_sentences(corpus[2]))
