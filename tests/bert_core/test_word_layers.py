"""Words -> pieces -> words (bert_core.word_layers): pooling of a word split into several pieces
and the windows of a long sentence, against the model run by hand. The tiny BERT is random and
built from a config in a temporary directory (nothing is downloaded)."""

import numpy as np
import pytest
import torch
from tiny_models import VOCAB, tiny_bert  # noqa: F401 - VOCAB: the pieces the tests below name

from bert_core.word_layers import TransformerWordEncoder, plan_windows, pool_words, resolve_model_dir
from suite_common.errors import EncoderError


def by_hand(directory, pieces):
    """(L+1, len(pieces), D) states of [CLS] pieces [SEP], computed directly with transformers."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModel.from_pretrained(str(directory)).eval()
    ids = torch.tensor([[tok.cls_token_id, *tok.convert_tokens_to_ids(pieces), tok.sep_token_id]])
    with torch.no_grad():
        states = model(input_ids=ids, output_hidden_states=True).hidden_states
    return torch.stack(states)[:, 0, 1:-1].numpy()


def test_a_word_split_into_pieces_is_its_first_piece_or_their_mean(tmp_path):
    d = tiny_bert(tmp_path / "bert")
    words = ["the", "unbelievable", "cat"]
    hand = by_hand(d, ["the", "un", "##believ", "##able", "cat"])
    for pooling, expected_word1 in [("first", hand[:, 1]), ("mean", hand[:, 1:4].mean(axis=1))]:
        encoder = TransformerWordEncoder(d, pooling=pooling)
        assert encoder.word_pieces(words) == ([5, 8, 9, 10, 6], [(0, 1), (1, 4), (4, 5)])
        ((i, layers),) = list(encoder.embed_sentences([words]))
        assert layers.shape == (3, 3, 16)  # embeddings + 2 layers, 3 words
        np.testing.assert_allclose(layers[:, 0], hand[:, 0], atol=1e-5)
        np.testing.assert_allclose(layers[:, 1], expected_word1, atol=1e-5)
        np.testing.assert_allclose(layers[:, 2], hand[:, 4], atol=1e-5)


def test_pool_words_by_hand():
    hidden = np.arange(2 * 4 * 1, dtype=np.float32).reshape(2, 4, 1)  # 2 layers, 4 pieces
    spans = [(0, 1), (1, 4)]
    assert pool_words(hidden, spans, "first")[:, :, 0].tolist() == [[0, 1], [4, 5]]
    assert pool_words(hidden, spans, "mean")[:, :, 0].tolist() == [[0, 2], [4, 6]]
    with pytest.raises(EncoderError, match="pooling"):
        pool_words(hidden, spans, "max")


def test_windows_overlap_by_half_and_each_word_takes_the_one_with_most_context():
    spans = [(i, i + 1) for i in range(10)]  # ten one-piece words, windows of 4 pieces
    windows, choice = plan_windows(spans, 4)
    assert windows == [(0, 4, 0, 4), (2, 6, 2, 6), (4, 8, 4, 8), (6, 10, 6, 10)]
    assert choice == [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]
    # a three-piece word never straddles a window; a word longer than a window is cut to its start
    windows, choice = plan_windows([(0, 1), (1, 4), (4, 5), (5, 6)], 3)
    assert all(fw < ew for fw, ew, _, _ in windows) and choice[1] is not None
    assert plan_windows([(0, 9)], 4) == ([(0, 1, 0, 4)], [0])


def test_a_long_sentence_is_read_in_windows_like_the_model_on_each_window(tmp_path):
    d = tiny_bert(tmp_path / "bert", max_position=8)  # 8 positions: 6 pieces + [CLS]/[SEP]
    words = "the cat sat on the mat , a big red dog sat on a mat .".split()
    encoder = TransformerWordEncoder(d, pooling="first")
    assert encoder.max_pieces == 6
    ((_, layers),) = list(encoder.embed_sentences([words]))
    windows, choice = plan_windows([(i, i + 1) for i in range(len(words))], 6)
    assert len(windows) > 2
    for w in range(len(words)):
        fw, ew, ps, pe = windows[choice[w]]
        hand = by_hand(d, words[ps:pe])
        np.testing.assert_allclose(layers[:, w], hand[:, w - ps], atol=1e-5)
    # the same sentence with room for all of it: one window, other (more contextual) vectors
    wide = TransformerWordEncoder(tiny_bert(tmp_path / "wide", max_position=64), pooling="first")
    ((_, whole),) = list(wide.embed_sentences([words]))
    np.testing.assert_allclose(whole, by_hand(tmp_path / "wide", words), atol=1e-5)


def test_batches_and_padding_do_not_change_a_sentence(tmp_path):
    d = tiny_bert(tmp_path / "bert")
    encoder = TransformerWordEncoder(d, pooling="mean")
    sentences = [["the", "cat"], ["a", "big", "unbelievable", "red", "dog", "sat", "."], ["mat"]]
    alone = [layers for s in sentences for _, layers in encoder.embed_sentences([s])]
    together = [layers for _, layers in encoder.embed_sentences(sentences, batch_size=3)]
    for a, b in zip(alone, together):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_unknown_model_paths_are_one_clear_error(tmp_path):
    with pytest.raises(EncoderError, match="no such model directory"):
        resolve_model_dir(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(EncoderError, match="no config.json"):
        resolve_model_dir(str(tmp_path / "empty"))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(EncoderError, match="cannot load"):
        TransformerWordEncoder(tmp_path / "broken")
