"""ScalarMix and Elmo: the original semantics (w=0, γ=1, λ‖w‖² on raw w, batch-global layer norm)."""

import pytest
import torch
from conftest import random_bilm

from elmo_core import Elmo, ScalarMix, batch_to_ids
from elmo_core.scalar_mix import batch_layer_norm


def _layers(seed=0):
    g = torch.Generator().manual_seed(seed)
    layers = torch.randn(3, 2, 4, 6, generator=g)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)
    return layers, mask


def test_initial_mix_is_uniform_average_with_gamma_one():
    layers, mask = _layers()
    mix = ScalarMix(3)
    assert mix.scalar_parameters.tolist() == [0, 0, 0] and mix.gamma.item() == 1
    torch.testing.assert_close(mix(layers, mask), layers.mean(0))


def test_modes():
    layers, mask = _layers()
    last = ScalarMix(3, "last")
    with torch.no_grad():
        last.gamma.fill_(2.5)
    torch.testing.assert_close(last(layers, mask), 2.5 * layers[2])  # γ still applies
    assert last.weights().tolist() == [0, 0, 1]
    avg = ScalarMix(3, "average")
    assert not avg.scalar_parameters.requires_grad and avg.gamma.requires_grad
    torch.testing.assert_close(avg(layers, mask), layers.mean(0))
    learned = ScalarMix(3, "all")
    with torch.no_grad():
        learned.scalar_parameters.copy_(torch.tensor([1.0, 0.0, -1.0]))
    s = torch.softmax(torch.tensor([1.0, 0.0, -1.0]), 0)
    torch.testing.assert_close(learned(layers, mask), sum(s[j] * layers[j] for j in range(3)))
    with pytest.raises(ValueError, match="mode must be one of"):
        ScalarMix(3, "concat")


def test_regularizer_value_and_gradient():
    mix = ScalarMix(3)
    w = torch.tensor([0.5, -1.0, 2.0])
    with torch.no_grad():
        mix.scalar_parameters.copy_(w)
    reg = mix.regularizer(0.1)
    torch.testing.assert_close(reg, 0.1 * (w**2).sum())
    reg.backward()
    torch.testing.assert_close(mix.scalar_parameters.grad, 2 * 0.1 * w)  # d/dw λ‖w‖² = 2λw
    assert mix.gamma.grad is None  # γ is never regularized
    assert ScalarMix(3, "last").regularizer(1.0).item() == 0
    assert ScalarMix(3).regularizer(0.0).item() == 0


def test_regularizer_pulls_towards_uniform():
    mix = ScalarMix(3)
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([2.0, 0.0, -2.0]))
    opt = torch.optim.SGD(mix.parameters(), lr=0.1)
    before = mix.weights().max().item()
    for _ in range(50):
        opt.zero_grad()
        mix.regularizer(1.0).backward()
        opt.step()
    assert mix.weights().max().item() < before and mix.weights().max().item() < 0.35


def test_layer_norm_is_one_mean_and_variance_per_layer_over_unmasked_tokens():
    layers, mask = _layers(1)
    mix = ScalarMix(3, layer_norm=True)
    # hand computation for layer 1: the 6 unmasked tokens × 6 dims, one mean, one (biased) variance
    values = [layers[1, b, t, d].item() for b in range(2) for t in range(4) for d in range(6) if mask[b, t]]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    expected = (layers[1] - mean) / (var + 1e-12) ** 0.5
    torch.testing.assert_close(batch_layer_norm(layers[1], mask), expected)
    # differs from per-token LayerNorm
    per_token = torch.nn.functional.layer_norm(layers[1], (6,), eps=1e-12)
    assert not torch.allclose(expected, per_token, atol=1e-3)
    full = sum(batch_layer_norm(layers[j], mask) for j in range(3)) / 3
    torch.testing.assert_close(mix(layers, mask), full)
    with pytest.raises(ValueError, match="needs the mask"):
        mix(layers)


def test_elmo_two_outputs_frozen_bilm_and_cached_path():
    bilm = random_bilm()
    elmo = Elmo(bilm=bilm, num_output_representations=2, dropout=0.0)
    assert all(not p.requires_grad for p in elmo.bilm.parameters())
    ids = batch_to_ids([["a", "b", "c"], ["d"]])
    out = elmo(ids)
    assert len(out.representations) == 2 and out.representations[0].shape == (2, 3, 16)
    loss = out.representations[0].sum() + elmo.regularizer(0.1)
    loss.backward()
    assert elmo.mixes[0].scalar_parameters.grad.abs().sum() > 0
    # mix 1 only sees the regularizer, whose gradient 2λw is 0 at the initial w = 0
    assert torch.equal(elmo.mixes[1].scalar_parameters.grad, torch.zeros(3))
    assert all(p.grad is None for p in elmo.bilm.parameters())
    # the cached path (precomputed layers, no biLM) gives the same representation
    with torch.no_grad():
        raw = bilm(ids)
        cached = Elmo(num_layers=3, num_output_representations=2, dropout=0.0)
        cached.load_state_dict(elmo.state_dict(), strict=False)
        torch.testing.assert_close(cached.mix(raw.layers, raw.mask).representations[0], out.representations[0])
    elmo.train()
    assert not elmo.bilm.training  # the biLM stays in eval mode
    weights = elmo.layer_weights()
    assert len(weights) == 2 and abs(sum(weights[0]["s"]) - 1) < 1e-5 and weights[0]["gamma"] == 1.0
