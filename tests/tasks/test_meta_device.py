"""Every task head, the POS probe's model and both layer sources run their forward pass (and the
heads their loss and backward) on PyTorch's ``meta`` device: tensors with shapes and no data. A
tensor that a forward pass creates on the CPU instead of its inputs' device meets a ``meta`` tensor
and fails loudly here, as it would fail (or crawl) on a GPU, which no test machine has.

The steps whose output depends on the data's values (``tasks.common.layers.DATA_DEPENDENT``,
``tasks.coref.model.DATA_DEPENDENT``) cannot run without data; each is replaced here by a stand-in
of the same shapes, and each is tested on the CPU below against what it stands for. Decoding is
data-dependent as a whole (Viterbi, argmax lists) and is not run here; the WSD probe has no model on
a device (a nearest-centroid rule on the host over cached vectors)."""

import sys

import numpy as np
import pytest
import torch
import torch.fx.experimental._config as fx_config
from conftest import random_bilm
from task_setups import TASKS
from task_setups import new_model as _new_model
from task_setups import task_setup as _setup

import elmo_core.bilm as bilm_module
import tasks.common.layers as task_layers
import tasks.coref.model as coref_model
from experiments.run_config import as_run


def on_meta(x):
    if isinstance(x, torch.Tensor):
        return x.to("meta")
    if isinstance(x, dict):
        return {k: on_meta(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(on_meta(v) for v in x)
    return x


def padded_rnn(rnn, x, mask):
    """``run_rnn``'s stand-in: the RNN over every step, padding included, padding zeroed after."""
    return rnn(x)[0] * mask.unsqueeze(-1)


def packed_as_full(bilm, direction, tokens, lengths, state, dropout=0.0):
    """``BiLM.run_direction``'s stand-in: every row runs every step (no padding), so the packed layout
    is the time-major flattening of ``tokens``; ``run_packed``, the LSTM layers themselves, runs as is."""
    B, T, P = tokens.shape
    outputs, final = bilm.run_packed(
        direction, tokens.transpose(0, 1).reshape(T * B, P), [B] * T, state, dropout=dropout
    )
    return [out.view(T, B, -1).transpose(0, 1) for out in outputs], final


@pytest.fixture
def shapes_only(monkeypatch):
    """The data-dependent steps replaced by shape-alike stand-ins; boolean-mask indexing keeps every
    element (torch's documented meta assumption); a check of values on the host (pytorch-crf's
    ``assert mask[0].all()``) is taken to pass."""
    assert task_layers.DATA_DEPENDENT == ("run_rnn", "host_lengths", "distinct_rows")
    assert coref_model.DATA_DEPENDENT == ("prune_spans", "CorefModel.gold_cluster_of_spans")
    import importlib

    for task in TASKS:  # every model module imported now, so that the stand-in replaces its run_rnn
        importlib.import_module(f"tasks.{task}.model")
    original = task_layers.run_rnn
    for name, module in list(sys.modules.items()):
        if name.startswith("tasks.") and getattr(module, "run_rnn", None) is original:
            monkeypatch.setattr(module, "run_rnn", padded_rnn)
    monkeypatch.setattr(task_layers, "host_lengths", lambda mask: torch.full((mask.shape[0],), mask.shape[1]))
    monkeypatch.setattr(
        task_layers, "distinct_rows", lambda rows: (rows, torch.arange(rows.shape[0], device=rows.device))
    )
    monkeypatch.setattr(
        coref_model,
        "prune_spans",
        lambda scores, starts, ends, k: torch.arange(min(k, scores.shape[0]), device=scores.device),
    )
    monkeypatch.setattr(
        coref_model.CorefModel,
        "gold_cluster_of_spans",
        staticmethod(lambda starts, ends, batch: torch.full_like(starts, -1)),
    )
    assert bilm_module.DATA_DEPENDENT == (
        "BiLM.token_representations",
        "CharCNN.padding_shortcut",
        "BiLM.run_direction",
    )
    monkeypatch.setattr(bilm_module.BiLM, "run_direction", packed_as_full)
    monkeypatch.setattr(bilm_module.BiLM, "token_representations", lambda self, chars: self.token_encoder(chars))
    from elmo_core.char_cnn import CharCNN

    monkeypatch.setattr(CharCNN, "padding_shortcut", False)
    truth = torch.Tensor.__bool__
    monkeypatch.setattr(torch.Tensor, "__bool__", lambda self: True if self.is_meta else truth(self))
    with fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        yield


@pytest.mark.every_task
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_task_head_forward_loss_and_backward_on_meta(task_name, bilm_files, tmp_path, shapes_only):
    cfg, task, source, data = _setup(task_name, bilm_files, tmp_path)
    rates = [k for k in cfg.task.model if "dropout" in k and isinstance(cfg.task.model[k], float)]
    for key in rates:  # every dropout on, so its masks are made too (``dropout_style`` names a kind, not a rate)
        cfg.task.model[key] = 0.3
    cfg.elmo.dropout = 0.5
    model = _new_model(cfg, task, source)
    assert any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())
    train = data["train"]
    batch = task.make_batch(train, [0] if task_name == "coref" else list(range(min(3, len(train.examples)))))
    model.to("meta").train()
    loss = model(on_meta(batch)).loss + model.regularizer()
    assert loss.device.type == "meta" and loss.dim() == 0
    loss.backward()
    assert all(p.grad is None or p.grad.device.type == "meta" for p in model.parameters())
    assert any(p.grad is not None for p in model.features.parameters())  # the ELMo mixes are in the graph


def test_pos_probe_model_on_meta(shapes_only):
    from tasks.common.layers import ElmoFeatures
    from tasks.probe_pos.model import LayerProbe

    model = (
        LayerProbe(["A", "B", "C"], ElmoFeatures("probe", 3, 8, mix="all", layer_norm=False, dropout=0.1, l2=0.0))
        .to("meta")
        .train()
    )
    batch = on_meta(
        {
            "layers": torch.randn(3, 2, 5, 8),
            "layer_mask": torch.ones(2, 5, dtype=torch.bool),
            "mask": torch.ones(2, 5, dtype=torch.bool),
            "tags": torch.randint(0, 3, (2, 5)),
        }
    )
    out = model(batch)
    assert out.scores.shape == (4, 2, 5, 3) and out.scores.device.type == "meta"
    out.loss.backward()


@pytest.mark.parametrize("stateful", [False, True])
def test_bilm_layer_source_on_meta(stateful, shapes_only):
    from elmo_core import batch_to_ids

    bilm = random_bilm(stateful=stateful).to("meta")
    ids = batch_to_ids([["The", "cat", "sat"], ["A", "dog"]])
    out = bilm(ids.to("meta"))
    assert out.layers.device.type == "meta" and out.layers.shape[:3] == (3, 2, 3)
    assert out.mask.device.type == "meta"


def test_transformer_layer_source_on_meta(tmp_path, shapes_only):
    from tiny_models import tiny_bert

    from bert_core.word_layers import TransformerWordEncoder

    encoder = TransformerWordEncoder(tiny_bert(tmp_path / "bert"), device="meta")
    assert next(encoder.model.parameters()).device.type == "meta"
    ids = torch.tensor([[2, 5, 6, 3], [2, 7, 3, 0]])
    states = encoder.window_states(ids, (ids != 0).long())
    assert states.device.type == "meta" and states.shape[:3] == (encoder.num_layers, 2, 4)


# the data-dependent steps, on the CPU, against what their stand-ins assume -----------------------


def test_run_rnn_equals_the_rnn_over_each_unpadded_sequence():
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(4, 3, batch_first=True, bidirectional=True)
    x, mask = torch.randn(2, 5, 4), torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    out = task_layers.run_rnn(rnn, x, mask)
    assert torch.allclose(out[1, :3], rnn(x[1:2, :3])[0][0], atol=1e-6) and (out[1, 3:] == 0).all()
    assert torch.allclose(out[0], padded_rnn(rnn, x, mask)[0], atol=1e-6)  # without padding they agree


def test_host_lengths_and_distinct_rows():
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    lengths = task_layers.host_lengths(mask)
    assert lengths.device.type == "cpu" and lengths.tolist() == [2, 3]
    rows = torch.tensor([[1, 2], [3, 4], [1, 2]])
    unique, inverse = task_layers.distinct_rows(rows)
    assert unique.shape == (2, 2) and torch.equal(unique[inverse], rows)


def test_token_embedder_with_distinct_rows_equals_every_token_embedded():
    """The char CNN over each distinct token once gives what the stand-in (every token) gives."""
    torch.manual_seed(0)
    embedder = task_layers.TokenEmbedder(["<pad>", "<unk>", "a"], 4, 5, 6, 3)
    words = torch.tensor([[2, 2, 1]])
    chars = torch.randint(1, 50, (1, 3, 7))
    chars[0, 1] = chars[0, 0]  # a repeated token
    deduplicated = embedder(words, chars)
    every = embedder.conv(embedder.char(chars.view(3, 7)).transpose(1, 2)).relu().amax(2)
    assert torch.allclose(deduplicated[0, :, 4:], every, atol=1e-6)


def test_token_representations_equal_every_token_through_the_char_cnn():
    bilm = random_bilm()
    chars = torch.randint(1, 200, (6, 50))
    chars[3] = chars[1]
    with torch.no_grad():
        assert torch.allclose(bilm.token_representations(chars), bilm.token_encoder(chars), atol=1e-6)


def test_coref_data_dependent_steps():
    kept = coref_model.prune_spans(torch.tensor([0.1, 0.9, 0.5]), torch.tensor([0, 1, 3]), torch.tensor([0, 2, 3]), 2)
    assert kept.tolist() == [1, 2]  # the best two, in document order
    batch = {"gold_starts": [1], "gold_ends": [2], "gold_clusters": [7]}
    clusters = coref_model.CorefModel.gold_cluster_of_spans(torch.tensor([0, 1]), torch.tensor([0, 2]), batch)
    assert clusters.tolist() == [-1, 7] and np.array_equal(clusters.shape, (2,))


# device=: the trainer moves the model and every batch to the run's device ------------------------


class _FirstUpdate(Exception):
    pass


def test_fit_trains_on_the_run_device(bilm_files, tmp_path, shapes_only, monkeypatch):
    """The device given to ``fit`` (``meta`` here, which no run may name) takes the model and each batch
    at the first update, which then runs there (on ``meta``: forward, loss and backward without data)."""
    from dataclasses import replace

    from experiments import trainer

    cfg, task, source, data = _setup("sst", bilm_files, tmp_path)
    config = as_run(cfg).trainer
    seen = []

    def first_update(model, batch, optimizer, t, params, norm=None):
        seen.append(
            {
                next(model.parameters()).device.type,
                *(v.device.type for v in batch.values() if isinstance(v, torch.Tensor)),
            }
        )
        loss = model(batch).loss + model.regularizer()
        loss.backward()
        raise _FirstUpdate

    monkeypatch.setattr(trainer, "train_step", first_update)
    with pytest.raises(_FirstUpdate):
        trainer.fit(
            task, _new_model(cfg, task, source), data, replace(config, max_epochs=1), device="meta", progress=False
        )
    assert seen == [{"meta"}]


def test_on_device_moves_nested_tensors_only():
    from experiments.trainer import on_device

    batch = {
        "a": torch.ones(2),
        "side": {"mask": torch.ones(1, dtype=torch.bool)},
        "spans": [(0, 1)],
        "gold": [torch.zeros(1)],
        "name": "x",
    }
    moved = on_device(batch, "meta")
    assert moved["a"].is_meta and moved["side"]["mask"].is_meta and moved["gold"][0].is_meta
    assert moved["spans"] == [(0, 1)] and moved["name"] == "x"
