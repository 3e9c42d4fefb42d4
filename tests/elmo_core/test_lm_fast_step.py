"""The fast biLM training step (§3.1) against the plain one: same losses over 20 updates, same
gradients, with and without the two directions side by side; the fused LSTM and softmax head
against autograd."""

import copy
import json

import pytest
import torch
from conftest import shared_path

from elmo_core.bilm import BiLM, ProjectedLSTM
from elmo_core.char_cnn import CharEmbedding, WindowConvMax
from elmo_core.characters import batch_to_ids
from elmo_core.options import parse_options
from elmo_core.pretrain import PRESETS
from elmo_core.pretraining import softmax_head
from elmo_core.pretraining.fused_lstm import projected_lstm
from elmo_core.pretraining.lm_data import LMStream, Vocabulary
from elmo_core.pretraining.lm_fast_step import FastTrainingStep, train_step_plain
from elmo_core.pretraining.lm_training import LanguageModel, detach_state
from elmo_core.pretraining.softmax_head import adaptive_nll_with_grads


def _model(seed=0, clip=3.0):
    options = json.loads(json.dumps(PRESETS["tiny"]))
    options["lstm"].update(dim=24, projection_dim=16, cell_clip=clip, proj_clip=clip)
    torch.manual_seed(seed)
    vocab = Vocabulary.build([shared_path("data/fixtures/bilm_tf_train/data.txt")], 1)
    lm = LanguageModel(BiLM(parse_options(options)), len(vocab), cutoffs=[20, 60]).train()
    return lm, vocab


def _train(fast: bool, updates: int = 20, side_by_side=None, clip=3.0):
    lm, vocab = _model(clip=clip)
    optimizer = torch.optim.Adagrad(lm.parameters(), lr=0.2, initial_accumulator_value=1.0)
    stream = LMStream([shared_path("data/fixtures/bilm_tf_train/data.txt")], vocab, 4, 5, seed=0)
    step = (
        FastTrainingStep(lm, side_by_side=side_by_side)
        if fast
        else (lambda b, s, scale: train_step_plain(lm, b, s, scale))
    )
    torch.manual_seed(7)  # dropout
    state, losses, epoch = lm.bilm.zero_state(4), [], 0
    while len(losses) < updates:
        for batch in stream.batches(epoch):  # epochs end with part-empty rows: shrinking batches
            count = int((batch.forward_targets >= 0).sum())
            optimizer.zero_grad(set_to_none=True)
            nll, state = step(batch, state, 5 / (2 * count))
            torch.nn.utils.clip_grad_norm_(lm.parameters(), 10.0)
            optimizer.step()
            state = detach_state(state)
            losses.append(float(nll.sum()) / (2 * count))
            if len(losses) == updates:
                break
        epoch += 1
    return torch.tensor(losses, dtype=torch.float64), lm


@pytest.mark.parametrize("side_by_side", [False, True])
@pytest.mark.parametrize("clip", [3.0, 0.05])  # 0.05: the cell and projection clips are active
def test_fast_step_gives_the_plain_losses_over_20_updates(side_by_side, clip):
    plain, plain_lm = _train(False, clip=clip)
    fast, fast_lm = _train(True, side_by_side=side_by_side, clip=clip)
    assert plain[-1] < plain[0]  # it learns
    assert torch.allclose(fast, plain, rtol=1e-4, atol=0), (fast - plain).abs().max()
    for (name, a), b in zip(plain_lm.named_parameters(), fast_lm.parameters()):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-5), name


def test_fast_step_gradients_and_states_equal_autograd():
    lm, vocab = _model(clip=0.1)
    batch = next(LMStream([shared_path("data/fixtures/bilm_tf_train/data.txt")], vocab, 4, 5, seed=0).batches(0))
    state = [(torch.randn_like(h), torch.randn_like(c)) for h, c in lm.bilm.zero_state(4)]
    results = []
    for fast in (False, True):
        lm.zero_grad(set_to_none=True)
        torch.manual_seed(3)
        nll, final = (FastTrainingStep(lm) if fast else lambda *a: train_step_plain(lm, *a))(batch, state, 0.5)
        results.append((nll, final, [p.grad.clone() for p in lm.parameters()]))
    (nll_a, final_a, grads_a), (nll_b, final_b, grads_b) = results
    assert torch.allclose(nll_a, nll_b, rtol=1e-5)
    for (h1, c1), (h2, c2) in zip(final_a, final_b):
        assert torch.allclose(h1, h2, atol=1e-6) and torch.allclose(c1, c2, atol=1e-6)
    for (name, _), a, b in zip(lm.named_parameters(), grads_a, grads_b):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6), name


def test_fused_lstm_equals_the_step_loop_under_autograd():
    """Shrinking packed batches, active clips, non-zero initial state: outputs, final states and
    the gradients of every input equal ProjectedLSTM's own step loop."""
    torch.manual_seed(0)
    layer = ProjectedLSTM(6, 10, 5, cell_clip=0.3, proj_clip=0.2)
    batch_sizes = [4, 4, 3, 3, 1]
    data = torch.randn(sum(batch_sizes), 6, requires_grad=True)
    h0, c0 = torch.randn(4, 5, requires_grad=True), torch.randn(4, 10, requires_grad=True)
    weights = torch.randn(sum(batch_sizes), 5)
    out, h, c = layer(data, batch_sizes, h0, c0)
    inputs = [data, h0, c0, layer.w_x, layer.w_h, layer.w_p, layer.bias]
    expected = torch.autograd.grad((out * weights).sum(), inputs)
    out2, h2, c2 = projected_lstm(
        data, layer.w_x, layer.bias + layer.forget_bias, layer.w_h, layer.w_p, h0, c0, batch_sizes, 0.3, 0.2
    )
    assert (
        torch.allclose(out, out2, atol=1e-6) and torch.allclose(h, h2, atol=1e-6) and torch.allclose(c, c2, atol=1e-6)
    )
    got = torch.autograd.grad((out2 * weights).sum(), inputs)
    for a, b in zip(expected, got):
        assert torch.allclose(a, b, atol=1e-5)


def test_fused_lstm_workspace_kept_across_layouts_changes_nothing():
    """The buffers and each step's views kept in a workspace from one call to the next (the same layout, a
    shrinking one, another of as many rows, another batch size, the first again) give exactly what a call
    without one gives."""
    torch.manual_seed(0)
    layer = ProjectedLSTM(6, 10, 5, cell_clip=0.3, proj_clip=0.2)
    weights = [layer.w_x, layer.bias + layer.forget_bias, layer.w_h, layer.w_p]
    workspace = {}
    for batch_sizes in ([4] * 5, [4] * 5, [4, 4, 3, 3, 1], [3] * 5, [2] * 6, [4] * 5):
        data = torch.randn(sum(batch_sizes), 6, requires_grad=True)
        h0, c0 = torch.randn(batch_sizes[0], 5), torch.randn(batch_sizes[0], 10)
        d_out = torch.randn(sum(batch_sizes), 5)
        results = []
        for kept in (None, workspace):
            out, h, c = projected_lstm(data, *weights, h0, c0, batch_sizes, 0.3, 0.2, kept)
            results.append([out, h, c, *torch.autograd.grad(out, [data, layer.w_x, layer.w_h, layer.w_p], d_out)])
        assert all(torch.equal(a, b) for a, b in zip(*results)), batch_sizes
    assert {"forward_steps", "backward_steps"} <= set(workspace)


@pytest.mark.parametrize(
    "head_bias, chunk_elements, narrow, exp_limit",
    [(False, 2**20, 16, 85.0), (True, 2**20, 16, 85.0), (True, 64, 16, 85.0), (True, 64, 0, 85.0)]
    + [(True, 2**20, 16, -1.0), (True, 64, 0, -1.0), (True, 64, 16, 5.5), (True, 64, 0, 5.5)],
)
def test_softmax_nll_and_gradients_equal_the_adaptive_softmax_under_autograd(
    head_bias, chunk_elements, narrow, exp_limit, monkeypatch
):
    """More rows than one chunk (256 rows; with 64 logits a chunk, the fewest: 4 rows), the cluster edges, an
    empty tail cluster, each softmax taken as low-rank (its weight gradient taken transposed) or not, the
    exponentials taken directly where their bound allows, with each row's largest logit subtracted first
    everywhere (``exp_limit`` -1) or in some chunks only (5.5: of the head's 150, 108 when it is taken as
    low-rank, 28 when not): the NLL per row equals autograd's, and the gradients of scale * Σ NLL (input and
    every parameter) are as close to autograd's in float64 as float32 autograd's own are (within 4x, or a
    millionth of the gradient's largest entry: the two float32 computations round and add up differently)."""
    monkeypatch.setattr(softmax_head, "CHUNK_ELEMENTS", chunk_elements)
    monkeypatch.setattr(softmax_head, "NARROW", narrow)
    monkeypatch.setattr(softmax_head, "EXP_LIMIT", exp_limit)
    torch.manual_seed(0)
    softmax = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 900, [10, 300, 700], div_value=2.0, head_bias=head_bias)
    x = torch.randn(600, 8, requires_grad=True)
    target = torch.randint(0, 300, (600,))  # nothing in the last cluster
    target[:4] = torch.tensor([0, 9, 10, 299])
    want = -softmax(x, target).output
    nll, dx, grads = adaptive_nll_with_grads(softmax, x, target, scale=0.3)
    assert torch.allclose(want, nll, atol=1e-5)
    expected = torch.autograd.grad(0.3 * want.sum(), [x] + list(softmax.parameters()), allow_unused=True)
    exact64 = copy.deepcopy(softmax).double()
    x64 = x.detach().double().requires_grad_()
    exact = torch.autograd.grad(
        -0.3 * exact64(x64, target).output.sum(), [x64] + list(exact64.parameters()), allow_unused=True
    )
    names = ["input"] + [name for name, _ in softmax.named_parameters()]
    for name, p, e, a, b in zip(names, [x] + list(softmax.parameters()), exact, expected, [dx] + grads):
        assert b.shape == p.shape, name
        if e is None:
            assert a is None and not b.any(), name
            continue
        error, autograd_error = (e - b.double()).abs().max(), (e - a.double()).abs().max()
        assert error <= max(4 * autograd_error, 1e-6 * e.abs().max()), name
    assert not grads[-1].any()  # the empty cluster
    with pytest.raises(ValueError, match="targets must be in"):
        adaptive_nll_with_grads(softmax, x[:1], torch.tensor([900]), 1.0)


def test_softmax_buffers_kept_between_calls_change_nothing(monkeypatch):
    """A workspace kept from one call to the next (more rows, then fewer, then more again than
    it holds): every result equals that of a call without one."""
    monkeypatch.setattr(softmax_head, "CHUNK_ELEMENTS", 2000)
    torch.manual_seed(1)
    softmax = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 900, [10, 300], div_value=2.0)
    workspace = {}
    for rows in (300, 7, 1, 500):
        x, target = torch.randn(rows, 8), torch.randint(0, 900, (rows,))
        kept = adaptive_nll_with_grads(softmax, x, target, 0.5, workspace)
        fresh = adaptive_nll_with_grads(softmax, x, target, 0.5)
        for a, b in zip([kept[0], kept[1]] + kept[2], [fresh[0], fresh[1]] + fresh[2]):
            assert torch.equal(a, b)
    assert workspace  # the buffers were kept


def test_softmax_nll_of_a_target_whose_probability_underflows_is_exact():
    """A target 200 nats below the best word (its probability is 0 in float32): its NLL is what log_softmax
    gives, not the logarithm of 0; the gradients stay those of autograd."""
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    weight = torch.tensor([[0.0, 0.0], [-200.0, 0.0], [3.0, 1.0]])
    column = torch.tensor([1, 0, 2])
    nll, dx, dw, _ = softmax_head._softmax_nll_with_grads(x.detach(), weight, None, column, 0.5)
    want = -torch.log_softmax(x @ weight.t(), 1).gather(1, column[:, None]).squeeze(1)
    assert torch.isfinite(nll).all() and nll[0] > 199 and torch.allclose(nll, want)
    expected = torch.autograd.grad(0.5 * want.sum(), x)[0]
    assert torch.allclose(dx, expected, atol=1e-6)


def test_char_embedding_equals_the_embedding_with_its_padding_row_under_autograd():
    torch.manual_seed(0)
    weight = torch.randn(7, 3, requires_grad=True)
    ids = torch.tensor([[0, 1, 1, 6], [2, 0, 6, 6]])
    grad = torch.randn(2, 4, 3)
    want = torch.nn.functional.embedding(ids, weight, padding_idx=0)
    got = CharEmbedding.apply(weight, ids, 0)
    assert torch.equal(want, got)
    expected, found = (torch.autograd.grad(out, weight, grad)[0] for out in (want, got))
    assert torch.allclose(expected, found) and not found[0].any() and found[6].abs().sum() > 0


def test_window_conv_max_equals_conv1d_and_amax_under_autograd():
    """Values and gradients (input, weight, bias) of the written-out backward equal autograd's
    conv1d + amax, including tokens whose maximal windows tie (repeated characters)."""
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(4, 6, 3)
    x = torch.randn(5, 4, 9)
    x[0] = x[0, :, :1].expand(4, 9)  # every window of token 0 the same: all tie
    x[1, :, 5:] = x[1, :, :4]  # a repeated stretch
    x.requires_grad_()
    weights = torch.randn(5, 6)
    want = conv(x).amax(dim=2)
    got = WindowConvMax.apply(x, conv.weight, conv.bias)
    assert torch.allclose(want, got, atol=1e-6)
    params = [conv.weight, conv.bias]
    expected = torch.autograd.grad((want * weights).sum(), [x] + params)
    found = torch.autograd.grad((got * weights).sum(), [x] + params)
    for a, b in zip(expected[1:], found[1:]):
        assert torch.allclose(a, b, atol=1e-5)
    # the input's gradient may sit on either of two tied windows; per token and channel its sum,
    # and everything of the tokens without ties, are the same
    assert torch.allclose(expected[0].sum(2), found[0].sum(2), atol=1e-5)
    assert torch.allclose(expected[0][2:], found[0][2:], atol=1e-6)


def test_window_conv_max_with_one_more_window_equals_amax_over_both_under_autograd():
    """``extra``, one more window's value per filter shared by every token (the padding-only window):
    the values and gradients (input, weight, bias, extra) are those of autograd's amax over the
    windows and it together, a tie between it and a window splitting the gradient as amax does. Small
    integers throughout, so that both ways compute every window exactly and tie in the same places."""
    torch.manual_seed(1)
    conv = torch.nn.Conv1d(4, 6, 3)
    with torch.no_grad():
        conv.weight.copy_(torch.randint(-3, 4, conv.weight.shape))
        conv.bias.copy_(torch.randint(-3, 4, conv.bias.shape))
    x = torch.randint(-3, 4, (5, 4, 9)).float().requires_grad_()
    windows_max = conv(x).amax(dim=2).detach()
    extra = torch.tensor([-1.0, float("-inf"), 500.0, -500.0, 0.0, 0.0])
    extra[0] = windows_max[2, 0]  # token 2's best window of filter 0 ties with it
    extra.requires_grad_()
    weights = torch.randn(5, 6)
    want = torch.cat([conv(x), extra.view(1, 6, 1).expand(5, 6, 1)], 2).amax(dim=2)
    got = WindowConvMax.apply(x, conv.weight, conv.bias, None, extra)
    assert torch.equal(want, got)
    inputs = [x, conv.weight, conv.bias, extra]
    expected = torch.autograd.grad((want * weights).sum(), inputs)
    found = torch.autograd.grad((got * weights).sum(), inputs)
    for a, b in zip(expected, found):
        assert torch.allclose(a, b, atol=1e-5)
    assert found[3][2] == weights[:, 2].sum() and found[3][0] != 0 and found[3][3] == 0


def test_training_char_cnn_equals_the_plain_convolution_with_gradients():
    """The training route of the character CNN (sorted chunks, every filter in one masked window
    product, padding-only windows once) against convolving every position of every token filter
    by filter under autograd: the same token vectors and the same gradients of every parameter,
    for short words, repeated letters and words as long as the token allows."""
    options = json.loads(json.dumps(PRESETS["tiny"]))
    options["char_cnn"]["max_characters_per_token"] = 12
    torch.manual_seed(0)
    bilm = BiLM(parse_options(options)).train()
    encoder = bilm.token_encoder
    encoder.CONV_CHUNK_AUTOGRAD = 3  # chunks of short words (padding-only windows) and of long ones (late starts)
    words = ["a", "the", "see", "aaaaaaa", "Mississippi", "antidisestablishment", "x" * 30, "ok"]
    char_ids = batch_to_ids([words], max_chars=12)[0]
    weights = torch.randn(len(words), bilm.opts.projection_dim)
    results = []
    for shortcut in (True, False):
        encoder.padding_shortcut = shortcut
        encoder.zero_grad(set_to_none=True)
        out = encoder(char_ids)
        (out * weights).sum().backward()
        results.append((out.detach(), {n: p.grad.clone() for n, p in encoder.named_parameters()}))
    encoder.padding_shortcut = True
    (fast, fast_grads), (plain, plain_grads) = results
    assert torch.allclose(fast, plain, atol=1e-5)
    for name, g in plain_grads.items():
        assert torch.allclose(fast_grads[name], g, atol=1e-5), name


def test_softmax_of_no_rows_gives_empty_results_and_zero_gradients():
    weight = torch.randn(50, 8)
    nll, dx, dw, db = softmax_head._softmax_nll_with_grads(
        torch.empty(0, 8), weight, torch.zeros(50), torch.empty(0, dtype=torch.long), 0.5
    )
    assert nll.shape == (0,) and dx.shape == (0, 8) and dw.shape == weight.shape
    assert not dw.any() and not db.any()


def test_softmax_of_a_tail_with_no_hidden_units_is_its_bias_alone():
    bias = torch.randn(50)
    column = torch.tensor([3, 7, 49])
    nll, dx, dw, db = softmax_head._softmax_nll_with_grads(torch.empty(3, 0), torch.empty(50, 0), bias, column, 1.0)
    assert torch.allclose(nll, -torch.log_softmax(bias, 0)[column])
    assert dx.shape == (3, 0) and dw.shape == (50, 0)
    expected = 3 * torch.softmax(bias, 0) - torch.bincount(column, minlength=50)
    assert torch.allclose(db, expected, atol=1e-6)
