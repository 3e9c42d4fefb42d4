"""One generic model test over every task (in the spirit of AllenNLP's ModelTestCase): on its tiny
fixture each task model trains a few steps with ELMo at the input and output, is saved and
reloaded and predicts the same, and the prediction of an example does not depend on the batch it
is in (its neighbours' lengths change its padding)."""

import random

import pytest
import torch
from task_setups import TASKS
from task_setups import new_model as _new_model
from task_setups import task_setup as _setup

from experiments import runner
from experiments.run_config import as_run
from experiments.trainer import make_optimizer, predict
from suite_common.errors import ConfigError
from tasks.common.layers import TaskModel


@pytest.mark.every_task
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_trains_saves_reloads_and_predicts_the_same(task_name, bilm_files, tmp_path):
    cfg, task, source, data = _setup(task_name, bilm_files, tmp_path)
    model = _new_model(cfg, task, source)
    optimizer = make_optimizer(model, as_run(cfg).trainer)
    train = data["train"]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    losses = []
    for _step, idx in zip(range(4), task.batches(train.examples, 4, shuffle=True, rng=random.Random(0))):
        model.train()
        loss = model(task.make_batch(train, idx)).loss + model.regularizer()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert all(torch.isfinite(torch.tensor(losses)))
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert any(k.startswith("features.") for k in changed), "the ELMo mixes received no gradient"
    assert any(not k.startswith("features.") for k in changed)
    expected = predict(task, model, data["dev"], 4)
    assert isinstance(model, TaskModel)  # the trainer's contract: loss, regularizer, decayed weights
    decayed = model.decayed_weights()
    assert decayed and not decayed & {id(p) for p in model.features.parameters()}
    assert all(
        id(p) not in decayed for n, p in model.named_parameters() if not n.rsplit(".", 1)[-1].startswith("weight")
    )

    path = tmp_path / "model.pt"
    torch.save({"task_state": task.state(), "model": model.state_dict()}, path)
    saved = torch.load(path, weights_only=True)
    fresh_task = runner.make_task(as_run(cfg))
    fresh_task.load_state(saved["task_state"])
    reloaded = _new_model(cfg, fresh_task, source)
    reloaded.load_state_dict(saved["model"])
    assert predict(fresh_task, reloaded, data["dev"], 4) == expected


@pytest.mark.every_task
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_prediction_does_not_depend_on_batch_or_padding(task_name, bilm_files, tmp_path):
    cfg, task, source, data = _setup(task_name, bilm_files, tmp_path)
    model = _new_model(cfg, task, source).eval()
    dev = data["dev"]
    with torch.no_grad():
        alone = [task.predict(model, task.make_batch(dev, [i]))[0] for i in range(len(dev))]
        together = predict(task, model, dev, len(dev))
        assert together == alone
        if task.batches(dev.examples, len(dev), shuffle=False) == [list(range(len(dev)))]:  # several per batch
            reversed_order = task.predict(model, task.make_batch(dev, list(range(len(dev)))[::-1]))[::-1]
            assert reversed_order == alone
        else:  # one document per batch (coreference): padding is between its sentences, already exercised
            assert task.name == "coref"


@pytest.mark.every_task
@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_every_model_returns_one_output_type(task_name, bilm_files, tmp_path):
    """The model contract: forward gives a TaskOutput, with the loss when the batch carries gold
    labels, and the decoded predictions (one per example) only in eval mode."""
    from tasks.common.layers import TaskOutput

    cfg, task, source, data = _setup(task_name, bilm_files, tmp_path)
    model = _new_model(cfg, task, source)
    batch = task.make_batch(data["train"], task.batches(data["train"].examples, 4, shuffle=False)[0])
    assert model.gold_keys and all(key in batch for key in model.gold_keys)
    trained = model.train()(batch)
    assert isinstance(trained, TaskOutput) and trained.predictions is None
    assert trained.loss.ndim == 0 and trained.loss.requires_grad
    with torch.no_grad():
        evaluated = model.eval()(batch)
        unlabelled = model({k: v for k, v in batch.items() if k not in model.gold_keys})
    n_examples = 1 if task_name == "coref" else len(task.batches(data["train"].examples, 4, shuffle=False)[0])
    assert len(evaluated.predictions) == n_examples and evaluated.loss is not None
    assert unlabelled.loss is None and unlabelled.predictions == evaluated.predictions


def test_xavier_uniform_embeddings_start_small_with_a_zero_padding_row():
    """``task.model.embedding_init``: AllenNLP's xavier_uniform (bound sqrt(6 / (rows + cols))) for the
    word and the character table, padding rows zero, and the default; ``normal`` keeps PyTorch's N(0, 1)."""
    import math

    from tasks.common.layers import TokenEmbedder

    words = ["@@PADDING@@"] + [f"w{i}" for i in range(999)]
    torch.manual_seed(0)
    xavier = TokenEmbedder(words, 50, 16, 8, 3, init="xavier_uniform")
    normal = TokenEmbedder(words, 50, 16, 8, 3, init="normal")
    assert TokenEmbedder(words, 50, 16, 8, 3).word.weight.abs().max() <= math.sqrt(6 / (1000 + 50))  # the default
    bound = math.sqrt(6 / (1000 + 50))
    w = xavier.word.weight.detach()
    assert w[0].abs().sum() == 0 and xavier.char.weight.detach()[0].abs().sum() == 0
    assert w.abs().max() <= bound and abs(w[1:].std().item() - bound / math.sqrt(3)) < 0.1 * bound
    assert abs(normal.word.weight.detach()[1:].std().item() - 1.0) < 0.05
    with pytest.raises(ConfigError, match="embedding_init"):
        TokenEmbedder(words, 50, 16, 8, 3, init="zeros")


def test_standard_dropout_draws_per_element_and_variational_per_sequence():
    """``task.model.dropout_style``: ``variational`` zeroes a feature for every time step of a sequence,
    ``standard`` (AllenNLP's crf_tagger) element by element; both scale the kept values by 1 / (1 - p)."""
    from tasks.common.layers import sequence_dropout

    x = torch.ones(4, 50, 64)
    torch.manual_seed(0)
    variational = sequence_dropout(0.5, "variational").train()(x)
    standard = sequence_dropout(0.5, "standard").train()(x)
    assert set(variational.unique().tolist()) == set(standard.unique().tolist()) == {0.0, 2.0}
    assert torch.equal(variational, variational[:, :1].expand_as(variational))  # one mask over time
    assert not torch.equal(standard, standard[:, :1].expand_as(standard))
    with pytest.raises(ConfigError, match="dropout_style"):
        sequence_dropout(0.5, "spatial")


@pytest.mark.parametrize("lowercase", [False, True])
def test_lowercased_words_share_one_embedding_row_and_keep_their_characters(lowercase, bilm_files, tmp_path):
    """``task.model.lowercase_words``: "The" and "the" read one word row; the characters keep the case."""
    import datasets

    _, task, _, _ = _setup("ner", bilm_files, tmp_path, [f"task.model.lowercase_words={str(lowercase).lower()}"])

    task.build_vocab(datasets.Dataset.from_dict({"tokens": [["The", "cat"], ["the", "Cat"]], "tags": [["O"] * 2] * 2}))
    inputs = task.token_inputs([["The", "the", "CAT"]])
    ids = inputs["word_ids"][0].tolist()
    assert (ids[0] == ids[1]) == lowercase and (ids[2] != 1) == lowercase  # "CAT" unseen unless lowercased
    assert not torch.equal(inputs["char_ids"][0, 0], inputs["char_ids"][0, 1])
    assert sorted(task.words[2:]) == (["cat", "the"] if lowercase else ["Cat", "The", "cat", "the"])
