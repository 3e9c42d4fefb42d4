import torch

from elmo_core.characters import MAX_CHARS, batch_to_ids, token_to_ids


def test_ascii_token_layout():
    ids = token_to_ids("cat")
    assert len(ids) == MAX_CHARS
    # begin-of-word 258, bytes, end-of-word 259, then padding 260; all shifted by +1
    assert ids[:5] == [259, ord("c") + 1, ord("a") + 1, ord("t") + 1, 260]
    assert set(ids[5:]) == {261}


def test_unicode_is_utf8_bytes():
    ids = token_to_ids("é€")
    assert ids[1:6] == [b + 1 for b in "é€".encode()]
    assert ids[6] == 260


def test_overlong_token_truncated_to_48_bytes():
    ids = token_to_ids("x" * 60)
    assert ids[0] == 259 and ids[1:49] == [ord("x") + 1] * 48 and ids[49] == 260
    # truncation is on bytes: a 2-byte character may be cut in half, as in the original
    ids = token_to_ids("é" * 30)
    assert ids[1:49] == [b + 1 for b in ("é" * 30).encode()[:48]] and ids[49] == 260


def test_sentence_boundaries_are_single_pseudo_characters():
    assert token_to_ids("<S>")[:4] == [259, 257, 260, 261]
    assert token_to_ids("</S>")[:4] == [259, 258, 260, 261]


def test_batch_to_ids_pads_with_zero_rows():
    ids = batch_to_ids([["a", "b", "c"], ["d"], []])
    assert ids.shape == (3, 3, MAX_CHARS) and ids.dtype == torch.long
    assert (ids[1, 1:] == 0).all() and (ids[2] == 0).all() and (ids[0] > 0).all()


def test_batch_to_ids_rejects_flat_list():
    import pytest

    with pytest.raises(TypeError):
        batch_to_ids(["not", "nested"])
