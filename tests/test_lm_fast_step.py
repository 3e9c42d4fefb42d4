"""The fast biLM training step (§3.1) against the plain one: same losses over 20 updates, same
gradients, with and without the two directions side by side; the fused LSTM and softmax head
against autograd."""
import json

import pytest
import torch

from elmo_core.bilm import BiLM, ProjectedLSTM
from elmo_core.fused_lstm import projected_lstm
from elmo_core.lm_data import LMStream, Vocabulary
from elmo_core.lm_fast_step import FastTrainingStep, train_step_plain
from elmo_core.lm_training import LanguageModel, detach_state
from elmo_core.options import parse_options
from elmo_core.pretrain import PRESETS
from elmo_core.softmax_head import adaptive_target_log_probs

from conftest import shared_path


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
    step = FastTrainingStep(lm, side_by_side=side_by_side) if fast else (
        lambda b, s, scale: train_step_plain(lm, b, s, scale))
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
    data = torch.randn(sum(batch_sizes), 6)
    h0, c0 = torch.randn(4, 5, requires_grad=True), torch.randn(4, 10, requires_grad=True)
    weights = torch.randn(sum(batch_sizes), 5)
    out, h, c = layer(data, batch_sizes, h0, c0)
    inputs = [h0, c0, layer.w_x, layer.w_h, layer.w_p, layer.bias]
    expected = torch.autograd.grad((out * weights).sum(), inputs)
    xw = torch.addmm(layer.bias + layer.forget_bias, data, layer.w_x)
    out2, h2, c2 = projected_lstm(xw, layer.w_h, layer.w_p, h0, c0, batch_sizes, 0.3, 0.2)
    assert torch.allclose(out, out2, atol=1e-6) and torch.allclose(h, h2, atol=1e-6) and torch.allclose(c, c2, atol=1e-6)
    got = torch.autograd.grad((out2 * weights).sum(), inputs)
    for a, b in zip(expected, got):
        assert torch.allclose(a, b, atol=1e-5)


def test_softmax_head_equals_the_adaptive_softmax():
    torch.manual_seed(0)
    softmax = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 700, [10, 300], div_value=2.0)
    x = torch.randn(600, 8, requires_grad=True)  # more rows than one chunk
    target = torch.randint(0, 700, (600,))
    target[:5] = torch.tensor([0, 9, 10, 299, 699])  # the cluster edges
    want = softmax(x, target).output
    got = adaptive_target_log_probs(softmax, x, target)
    assert torch.allclose(want, got, atol=1e-5)
    params = [x] + list(softmax.parameters())
    weights = torch.randn(600)
    for a, b in zip(torch.autograd.grad((want * weights).sum(), params),
                    torch.autograd.grad((got * weights).sum(), params)):
        assert torch.allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="targets must be in"):
        adaptive_target_log_probs(softmax, x[:1], torch.tensor([700]))
