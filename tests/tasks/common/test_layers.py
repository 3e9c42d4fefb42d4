"""Task-side layers: the character CNN computed once per distinct token equals the plain computation."""

import torch

from elmo_core.characters import batch_to_ids
from tasks.common.layers import TokenEmbedder, rows_at


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


def test_character_gradients_repeat_bit_for_bit_on_two_threads():
    """Repeated words share one pass of the character CNN; spreading it back to their positions must add the
    gradients in a fixed order, or a run on two threads does not repeat (indexing's backward on the CPU adds
    repeated rows in no fixed order there). The task's embedder and the biLM's token layer."""
    from elmo_core.bilm import BiLM
    from elmo_core.options import parse_options
    from elmo_core.pretrain import PRESETS

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        torch.manual_seed(0)
        embedder = TokenEmbedder(["<pad>", "<unk>"], 8, 16, 64, 3)
        vocabulary = torch.randint(1, 200, (20, 12))  # 40 x 30 tokens of 20 distinct words
        chars = vocabulary[torch.randint(0, 20, (40, 30))]
        words = torch.ones(40, 30, dtype=torch.long)
        bilm = BiLM(parse_options(PRESETS["tiny"])).train()
        bilm_chars = torch.randint(1, 200, (20, 50))[torch.randint(0, 20, (1200,))]

        weights = torch.randn(40, 30, 8 + 64), torch.randn(1200, bilm.opts.projection_dim)  # a gradient per token

        def gradients():
            embedder.zero_grad()
            bilm.zero_grad()
            (embedder(words, chars) * weights[0]).sum().backward()
            (bilm.token_representations(bilm_chars) * weights[1]).sum().backward()
            return [p.grad.clone() for p in [*embedder.parameters(), *bilm.token_encoder.parameters()]]

        first = gradients()
        for _ in range(4):
            assert all(torch.equal(a, b) for a, b in zip(first, gradients()))
    finally:
        torch.set_num_threads(before)


def test_rows_at_is_indexing_with_its_gradient_added_in_a_fixed_order():
    torch.manual_seed(0)
    x = torch.randn(30, 4, requires_grad=True)
    index = torch.randint(0, 30, (50, 7))  # 2-D, with repeats
    weight = torch.randn(50, 7, 4)
    assert torch.equal(rows_at(x, index), x[index])
    (rows_at(x, index) * weight).sum().backward()
    got, x.grad = x.grad, None
    (x[index] * weight).sum().backward()
    assert torch.allclose(got, x.grad, atol=1e-6)
