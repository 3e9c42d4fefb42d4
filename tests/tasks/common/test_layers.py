"""Task-side layers: the character CNN computed once per distinct token equals the plain computation."""

import torch

from elmo_core.characters import batch_to_ids
from tasks.common.layers import TokenEmbedder


def test_char_cnn_over_distinct_tokens_equals_per_position():
    torch.manual_seed(0)
    emb = TokenEmbedder(["<pad>", "<unk>", "the"], word_dim=4, char_dim=5, char_filters=7, char_width=3)
    sentences = [["the", "cat", "sat", "on", "the", "mat"], ["the", "cat"], ["a", "cat", "the"]]
    chars = batch_to_ids(sentences)
    words = torch.zeros(chars.shape[:2], dtype=torch.long)
    got = emb(words, chars)[..., 4:]
    B, T, C = chars.shape
    plain = torch.relu(emb.conv(emb.char(chars.view(B * T, C)).transpose(1, 2))).amax(dim=2).view(B, T, -1)
    assert torch.allclose(got, plain, atol=1e-6)
    assert torch.equal(got[0, 0], got[0, 4]) and torch.equal(got[0, 1], got[1, 1])
