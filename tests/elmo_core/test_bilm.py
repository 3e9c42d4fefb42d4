"""biLM behaviour on random models of any shape the format allows."""

import numpy as np
import pytest
import torch
from conftest import REPO, random_bilm

from elmo_core import batch_to_ids, load_bilm, save_bilm
from elmo_core.original_format import original_arrays, read_weight_arrays
from elmo_core.row_packing import forward_in_rows

SENTS = [["The", "cat", "sat", "."], ["Über", "naïve", "café", "—", "x" * 70], ["One"]]


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # residual connections, projection, relu
        {"lstm__use_skip_connections": False, "char_cnn__activation": "tanh"},
        {"lstm__projection_dim": 18, "lstm__n_layers": 3},  # F == P: no CNN_proj; 3 layers
    ],
)
def test_round_trip_save_load_is_exact(tmp_path, overrides):
    bilm = random_bilm(**overrides)
    save_bilm(bilm, tmp_path / "options.json", tmp_path / "weights.hdf5")
    loaded = load_bilm(tmp_path / "options.json", tmp_path / "weights.hdf5")
    a, b = original_arrays(bilm), read_weight_arrays(tmp_path / "weights.hdf5", loaded.opts)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    if bilm.opts.n_filters == bilm.opts.projection_dim:
        assert "CNN_proj/W_proj" not in a
    ids = batch_to_ids(SENTS)
    with torch.no_grad():
        assert torch.equal(bilm(ids).layers, loaded(ids).layers)
    # saving the loaded model again gives the same arrays
    save_bilm(loaded, tmp_path / "o2.json", tmp_path / "w2.hdf5")
    for k, v in read_weight_arrays(tmp_path / "w2.hdf5", loaded.opts).items():
        np.testing.assert_array_equal(v, a[k])


def test_output_shapes_and_mask():
    bilm = random_bilm()
    with torch.no_grad():
        out = bilm(batch_to_ids(SENTS))
    assert out.layers.shape == (3, 3, 5, 16)
    assert out.mask.tolist() == [[True] * 4 + [False], [True] * 5, [True] + [False] * 4]
    assert (out.layers[:, 2, 1:] == 0).all()  # padding is zero
    assert torch.isfinite(out.layers).all()


def test_stateless_is_deterministic_and_independent_of_batch():
    bilm = random_bilm()
    ids = batch_to_ids(SENTS)
    with torch.no_grad():
        a, b = bilm(ids).layers, bilm(ids).layers
        alone = bilm(batch_to_ids([SENTS[0]])).layers
    assert torch.equal(a, b)
    torch.testing.assert_close(alone[:, 0, :4], a[:, 0, :4], atol=1e-6, rtol=0)


def test_stateful_carries_state_per_row_and_resets():
    bilm = random_bilm(stateful=True)
    ids = batch_to_ids(SENTS)
    with torch.no_grad():
        first, second = bilm(ids).layers, bilm(ids).layers
        assert not torch.allclose(first[1:], second[1:])  # LSTM layers see the carried state
        assert torch.equal(first[0], second[0])  # the token layer has no state
        bilm.reset_state()
        assert torch.equal(bilm(ids).layers, first)
        # a smaller batch uses the first rows' states
        small = bilm(batch_to_ids(SENTS[:1])).layers
    bilm.reset_state()
    with torch.no_grad():
        bilm(ids)
        bilm(ids)
        assert not torch.allclose(small[1:, 0, :4], bilm(ids).layers[1:, 0, :4])


def test_token_cache_gives_identical_results():
    bilm = random_bilm()
    ids = batch_to_ids(SENTS + [["The", "cat", "."]])
    with torch.no_grad():
        cached_first = bilm(ids).layers
        misses = bilm.token_cache_misses
        cached_again = bilm(ids).layers
        assert bilm.token_cache_misses == misses and bilm.token_cache_hits > 0
        bilm.token_cache_size = 0
        uncached = bilm(ids).layers
    torch.testing.assert_close(cached_first, uncached, atol=1e-6, rtol=0)
    assert torch.equal(cached_first, cached_again)
    # unique types: 10 distinct words + <S> + </S>
    assert misses == 12


def test_train_mode_bypasses_and_clears_cache():
    bilm = random_bilm()
    with torch.no_grad():
        bilm(batch_to_ids(SENTS))
    assert bilm._token_cache
    bilm.train()
    assert not bilm._token_cache


def test_wrong_input_shape_is_a_clear_error():
    with pytest.raises(ValueError, match="character ids of shape"):
        random_bilm()(torch.zeros(2, 3, 20, dtype=torch.long))


def test_elmo_core_imports_only_torch_numpy_h5py():
    """elmo_core must work without Hydra, datasets, tqdm or any task code."""
    import subprocess
    import sys

    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'tqdm', 'hydra', 'omegaconf', 'datasets', 'tasks', 'pandas'}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import elmo_core, elmo_core.embed, elmo_core.pretrain, elmo_core.perplexity, elmo_core.neighbors\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    assert out.stdout.strip() == "ok", out.stderr[-1000:]


def test_directions_side_by_side_equal_one_after_the_other():
    from elmo_core.bilm import run_side_by_side

    bilm = random_bilm()
    sentences = [["The", "cat", "sat", "."], ["A", "much", "longer", "sentence", "than", "that", "one"], ["Hi"]]
    ids = batch_to_ids(sentences)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with torch.no_grad():
            together = bilm(ids).layers
        torch.set_num_threads(1)  # below two threads the directions run one after the other
        with torch.no_grad():
            apart = bilm(ids).layers
    finally:
        torch.set_num_threads(threads)
    assert torch.allclose(together, apart, atol=1e-6)
    assert run_side_by_side(lambda: 1, lambda: 2) == [1, 2]
    with pytest.raises(ZeroDivisionError):
        run_side_by_side(lambda: 1, lambda: 1 / 0)
    assert torch.get_num_threads() == threads


def test_side_by_side_runs_under_the_callers_autograd_mode():
    from elmo_core.bilm import run_side_by_side

    with torch.no_grad():
        assert run_side_by_side(torch.is_grad_enabled, torch.is_grad_enabled) == [False, False]
    with torch.inference_mode():
        assert run_side_by_side(torch.is_inference_mode_enabled, torch.is_inference_mode_enabled) == [True, True]
    assert run_side_by_side(torch.is_grad_enabled, torch.is_grad_enabled) == [True, True]


def test_inference_step_matches_the_autograd_step_and_follows_weight_changes():
    """Without autograd the LSTM step uses in-place gates and (with MKL, >= 32 rows) a packed copy
    of the recurrent weight; it must agree with the autograd step, also at the short tail steps
    of a packed batch, and notice when the weight changes."""
    bilm = random_bilm()
    rng = np.random.default_rng(0)
    words = ["the", "cat", "sat", "on", "a", "mat", "Über", "naïve", "."]
    sentences = [list(rng.choice(words, size=int(n))) for n in rng.integers(1, 12, size=40)]
    ids = batch_to_ids(sentences)

    def both_paths():
        with torch.no_grad():
            fast = bilm(ids).layers
        slow = bilm(ids).layers.detach()  # parameters require grad: the autograd step
        return fast, slow

    fast, slow = both_paths()
    assert torch.allclose(fast, slow, atol=1e-6)
    with torch.no_grad():
        bilm.forward_layers[1].w_h.mul_(-1.5)
    changed_fast, changed_slow = both_paths()
    assert torch.allclose(changed_fast, changed_slow, atol=1e-6)
    assert not torch.allclose(changed_fast[2], fast[2], atol=1e-3)


def _full_convolution(encoder, ids):
    """The token encoder the plain way: every filter over all max_chars positions."""
    x = encoder.char_embed(ids).transpose(1, 2)
    x = torch.cat([encoder.activation(conv(x).amax(dim=2)) for conv in encoder.convs], dim=1)
    for gate, transform in zip(encoder.highway_gate, encoder.highway_transform):
        g = torch.sigmoid(gate(x))
        x = g * torch.relu(transform(x)) + (1.0 - g) * x
    return encoder.projection(x)


def test_char_cnn_skips_padding_windows_with_the_same_values_and_gradients():
    """The convolutions stop at each token's last character (windows of in-token padding alone
    are computed once), with and without autograd: same values and same gradients as the
    full convolution."""
    bilm = random_bilm(char_cnn__filters=[[1, 4], [3, 5], [7, 6]])
    with torch.no_grad():
        bilm.token_encoder.char_embed.weight.normal_()  # a non-zero padding-character embedding
    words = ["a", "to", "Über", "naïve", "x" * 47, "y" * 48, "z" * 90, "—", "cat"] * 5
    ids = torch.cat([batch_to_ids([words])[0], bilm.bos_ids[None], bilm.eos_ids[None]])
    encoder = bilm.token_encoder
    with torch.no_grad():
        fast = encoder(ids)
    full = _full_convolution(encoder, ids)
    assert torch.allclose(fast, full, atol=1e-6)
    assert torch.allclose(fast[:9], fast[9:18])  # the same word gives the same vector in any chunk
    weights = torch.randn_like(full)
    params = list(encoder.parameters())
    expected = torch.autograd.grad((full * weights).sum(), params)
    shortcut = encoder(ids)
    assert torch.allclose(shortcut, full, atol=1e-6)
    for got, want in zip(torch.autograd.grad((shortcut * weights).sum(), params), expected):
        assert torch.allclose(got, want, atol=1e-5, rtol=1e-4)


def test_a_model_built_in_inference_mode_runs():
    """Weights created under inference_mode have no version counter: the packed-weight cache
    must not need one."""
    with torch.inference_mode():
        bilm = random_bilm()
        ids = batch_to_ids([["a", "b"]] * 40)
        out = forward_in_rows(bilm, ids, 40).layers
        assert torch.allclose(out, bilm(ids).layers, atol=1e-6)


def test_elmo_core_has_no_import_cycles():
    """Module-level and function-level imports between elmo_core modules form no cycle."""
    import ast

    modules = {p.stem: p for p in (REPO / "elmo_core").glob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("elmo_core."):
                deps.add(node.module.split(".")[1])
        graph[name] = {d for d in deps if d in modules and d != name}

    def cycle_from(start, node, seen):
        for nxt in graph[node]:
            if nxt == start or (nxt not in seen and cycle_from(start, nxt, seen | {nxt})):
                return True
        return False

    assert [m for m in graph if cycle_from(m, m, {m})] == []
