"""Settings that make a task head behave as its reference implementation does (results/conformance.md):
SRL's orthonormal start (He et al. 2017 §3) and the two ways allennlp's CRF differs from the suite's."""

import itertools

import pytest
import torch
from conftest import FIXTURES
from task_setups import new_model as _new_model
from task_setups import task_setup as _setup

from experiments.plan import counted_config
from experiments.run_config import as_run
from tasks.ner.crf import FORBIDDEN, ConstrainedCRF
from tasks.srl.model import HighwayLSTMLayer


def _orthonormal_rows(block: torch.Tensor) -> bool:
    rows = block if block.shape[0] <= block.shape[1] else block.T
    return torch.allclose(rows @ rows.T, torch.eye(rows.shape[0]), atol=1e-5)


def test_orthogonal_init_gives_one_orthonormal_block_per_gate_and_forget_bias_one():
    torch.manual_seed(0)
    layer = HighwayLSTMLayer(12, 8, reverse=False)
    layer.orthogonal_init()
    lstm = layer.lstm
    for gate in range(4):
        rows = slice(8 * gate, 8 * gate + 8)
        assert _orthonormal_rows(lstm.weight_ih_l0[rows].detach())
        assert _orthonormal_rows(lstm.weight_hh_l0[rows].detach())
    assert _orthonormal_rows(layer.gate.weight[:, :12].detach()) and _orthonormal_rows(
        layer.gate.weight[:, 12:].detach()
    )
    assert _orthonormal_rows(layer.carry.weight.detach())
    bias = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach()
    assert torch.equal(bias[8:16], torch.ones(8)) and bias[:8].abs().sum() == 0 and bias[16:].abs().sum() == 0


def test_srl_lstm_init_reaches_every_layer_and_the_output(bilm_files, tmp_path):
    outs = {}
    for how in ("pytorch", "orthogonal"):
        cfg, task, source, _ = _setup("srl", bilm_files, tmp_path / how, [f"task.model.lstm_init={how}"])
        outs[how] = _new_model(cfg, task, source)
    orthogonal, default = outs["orthogonal"], outs["pytorch"]
    assert all(_orthonormal_rows(layer.lstm.weight_hh_l0[:8].detach()) for layer in orthogonal.layers[:1])
    assert all(layer.lstm.bias_hh_l0.detach().max() == 1.0 for layer in orthogonal.layers)
    assert _orthonormal_rows(orthogonal.output.weight.detach())
    assert not _orthonormal_rows(default.layers[0].lstm.weight_hh_l0[: default.layers[0].lstm.hidden_size].detach())


def _path_score(crf: ConstrainedCRF, emissions: torch.Tensor, path: tuple, masked: bool) -> torch.Tensor:
    trans, start, end = crf.free_transitions, crf.free_start_transitions, crf.free_end_transitions
    if masked:
        trans, start, end = trans + crf.transition_mask, start + crf.start_mask, end + crf.end_mask
    score = start[path[0]] + end[path[-1]] + sum(emissions[i, t] for i, t in enumerate(path))
    return score + sum(trans[a, b] for a, b in zip(path, path[1:]))


@pytest.mark.parametrize("constrain_training", [True, False])
def test_crf_likelihood_counts_the_impossible_paths_only_without_training_constraints(constrain_training):
    """By enumeration over every path of 3 tags: allennlp's CRF (``decoding``) normalizes over all of
    them, the suite's default over the allowed ones; Viterbi is constrained either way."""
    labels = ["O", "B-PER", "L-PER", "U-PER"]
    torch.manual_seed(0)
    crf = ConstrainedCRF(labels, constrain_training=constrain_training)
    emissions, gold = torch.randn(3, 4), (1, 2, 0)  # B-PER L-PER O
    paths = list(itertools.product(range(4), repeat=3))
    allowed = [p for p in paths if _path_score(crf, emissions, p, masked=True) > FORBIDDEN / 2]
    assert 0 < len(allowed) < len(paths)
    normalizer = torch.logsumexp(
        torch.stack([_path_score(crf, emissions, p, masked=True) for p in allowed])
        if constrain_training
        else torch.stack([_path_score(crf, emissions, p, masked=False) for p in paths]),
        0,
    )
    expected = _path_score(crf, emissions, gold, masked=constrain_training) - normalizer
    got = crf(emissions[None], torch.tensor([gold]), torch.ones(1, 3, dtype=torch.bool))
    assert torch.allclose(got, expected, atol=1e-5)
    assert tuple(crf.decode(emissions[None], torch.ones(1, 3, dtype=torch.bool))[0]) in allowed


def test_crf_loss_sum_is_the_batch_size_times_the_mean(bilm_files, tmp_path):
    losses = {}
    for reduction in ("mean", "sum"):
        cfg, task, source, data = _setup("ner", bilm_files, tmp_path / reduction, [f"task.model.crf_loss={reduction}"])
        model = _new_model(cfg, task, source).eval()
        batch = task.make_batch(data["train"], next(iter(task.batches(data["train"].examples, 4, shuffle=False))))
        losses[reduction] = model(batch).loss.item()
    size = batch["mask"].shape[0]
    assert size > 1 and losses["sum"] == pytest.approx(size * losses["mean"], rel=1e-5)


@pytest.mark.parametrize("key, value", [("task.model.crf_constraints", "decoding"), ("task.model.crf_loss", "sum")])
def test_a_setting_added_after_records_counts_only_off_its_default(key, value, bilm_files, tmp_path):
    """Records made before these settings ran their defaults: at the default a run's counted
    configuration does not name them (its identity is the records'), off it, it does."""
    default = counted_config(as_run(_setup("ner", bilm_files, tmp_path / "a", [])[0]), {})
    changed = counted_config(as_run(_setup("ner", bilm_files, tmp_path / "b", [f"{key}={value}"])[0]), {})
    name = key.rsplit(".", 1)[1]
    assert name not in default["task"]["model"] and changed["task"]["model"][name] == value


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_recurrent_highway_layer_gives_allennlps_augmented_lstm_outputs(direction):
    """Against outputs stored from allennlp 2.10.1's AugmentedLstm with the same weights
    (``benchmarks/conformance/reference_cell.py``); padding stays zero."""
    from suite_common.checkpoints import load_tensors
    from tasks.srl.model import RecurrentHighwayLayer

    stored = load_tensors(FIXTURES / "augmented_lstm_allennlp.pt", "reference outputs")
    weights, x, lengths = stored[direction], stored["inputs"], stored["lengths"]
    layer = RecurrentHighwayLayer(x.shape[2], weights["state_weight"].shape[1], direction == "backward", 0.0).eval()
    with torch.no_grad():
        layer.input_linearity.weight.copy_(weights["input_weight"])
        layer.input_linearity.bias.copy_(weights["input_bias"])
        layer.state_linearity.weight.copy_(weights["state_weight"])
        layer.state_linearity.bias.copy_(weights["state_bias"])
    mask = torch.arange(x.shape[1])[None] < lengths[:, None]
    out = layer(x, mask)
    assert torch.allclose(out, weights["outputs"], atol=1e-6)
    assert out[~mask].abs().sum() == 0


def test_recurrent_dropout_is_one_mask_per_sequence_on_the_state_and_off_in_eval():
    from tasks.srl.model import RecurrentHighwayLayer

    torch.manual_seed(0)
    layer = RecurrentHighwayLayer(4, 6, reverse=False, recurrent_dropout=0.5)
    x, mask = torch.randn(2, 5, 4), torch.ones(2, 5, dtype=torch.bool)
    seen = []
    layer.state_linearity.register_forward_pre_hook(lambda module, args: seen.append(args[0].detach().clone()))
    layer.train()(x, mask)
    states = torch.stack(seen[1:])  # step 0 reads h(-1) = 0
    dropped = states == 0
    assert dropped.any() and torch.equal(dropped, dropped[:1].expand_as(dropped))  # the same units every step
    seen.clear()
    layer.eval()(x, mask)
    assert not (torch.stack(seen[1:]) == 0).any()


@pytest.mark.parametrize("reverse", [False, True])
def test_recurrent_highway_layer_on_a_padded_batch_equals_each_sentence_alone(reverse):
    """Each step computes only the sentences still running (longest first): outputs and gradients of a
    padded batch in any order are those of each sentence run alone, and padding stays zero."""
    from tasks.srl.model import RecurrentHighwayLayer

    torch.manual_seed(0)
    layer = RecurrentHighwayLayer(4, 6, reverse=reverse, recurrent_dropout=0.0)
    lengths = torch.tensor([3, 7, 1, 7, 5])
    x = torch.randn(5, 7, 4, requires_grad=True)
    mask = torch.arange(7)[None] < lengths[:, None]
    out = layer(x, mask)
    (grad_batch,) = torch.autograd.grad((out * out).sum(), x)
    assert out[~mask].abs().sum() == 0
    for row, n in enumerate(lengths.tolist()):
        alone = layer(x[row : row + 1, :n], torch.ones(1, n, dtype=torch.bool))
        torch.testing.assert_close(out[row, :n], alone[0], atol=1e-6, rtol=0)
        (grad_alone,) = torch.autograd.grad((alone * alone).sum(), x)
        torch.testing.assert_close(grad_batch[row], grad_alone[row], atol=1e-6, rtol=0)


def test_srl_with_the_recurrent_highway_trains_and_predicts_the_same_alone_or_padded(bilm_files, tmp_path):
    from experiments.trainer import make_optimizer, predict

    overrides = ["task.model.highway=recurrent", "task.model.lstm_init=orthogonal", "task.model.dropout=0.1"]
    cfg, task, source, data = _setup("srl", bilm_files, tmp_path, overrides)
    model = _new_model(cfg, task, source)
    optimizer = make_optimizer(model, as_run(cfg).trainer)
    before = model.layers[0].state_linearity.weight.detach().clone()
    train = data["train"]
    for idx in task.batches(train.examples, 4, shuffle=False)[:2]:
        loss = model.train()(task.make_batch(train, idx)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert torch.isfinite(loss) and not torch.equal(model.layers[0].state_linearity.weight, before)
    dev = data["dev"]
    with torch.no_grad():
        alone = [task.predict(model.eval(), task.make_batch(dev, [i]))[0] for i in range(len(dev))]
        assert predict(task, model, dev, len(dev)) == alone


def test_coref_xavier_init_starts_the_feature_embeddings_small_and_the_recurrent_weights_orthogonal(
    bilm_files, tmp_path
):
    outs = {}
    for how in ("pytorch", "xavier"):
        cfg, task, source, _ = _setup("coref", bilm_files, tmp_path / how, [f"task.model.weight_init={how}"])
        outs[how] = _new_model(cfg, task, source)
    xavier, default = outs["xavier"], outs["pytorch"]
    width = xavier.width_embedding.weight.detach()
    expected = (2 / sum(width.shape)) ** 0.5  # Xavier-normal's standard deviation
    assert abs(width.std().item() - expected) < 0.3 * expected
    assert default.distance_embedding.weight.detach().std().item() > 2 * expected  # PyTorch's N(0, 1)
    hh = xavier.lstm.weight_hh_l0.detach()
    assert torch.allclose(hh.T @ hh, torch.eye(hh.shape[1]), atol=1e-5)


def test_coref_document_context_runs_the_lstm_across_sentence_boundaries(bilm_files, tmp_path):
    """``sentence``: each sentence's outputs are its own; ``document``: the first word of a sentence
    depends on the sentence before it, and the outputs equal one LSTM pass over the document's words."""
    cfg, task, source, _ = _setup("coref", bilm_files, tmp_path / "d", ["task.model.context=document"])
    model = _new_model(cfg, task, source).eval()
    mask = torch.tensor([[True, True, True], [True, True, False]])
    text = torch.randn(2, 3, model.lstm.input_size)
    changed = text.clone()
    changed[0, 0] += 1.0  # the first sentence's first word
    with torch.no_grad():
        document = model.contextualize(text, mask)
        assert torch.allclose(document[mask], model.lstm(text[mask].unsqueeze(0))[0][0], atol=1e-6)
        assert not torch.allclose(model.contextualize(changed, mask)[1, 0], document[1, 0])
        assert document[1, 2].abs().sum() == 0  # padding stays zero
        model.context = "sentence"
        assert torch.allclose(model.contextualize(changed, mask)[1], model.contextualize(text, mask)[1])
