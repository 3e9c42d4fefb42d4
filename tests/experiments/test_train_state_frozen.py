"""A training state leaves frozen parameters out and checks them by digest when resumed
(``experiments/train_state.py``): a small file to carry between machines, never resumed on other weights."""

import random

import pytest
import torch
from torch import nn

from experiments import train_state
from experiments.trainer import History
from suite_common.errors import WeightsError


class Tagger(nn.Module):
    def __init__(self, vectors: torch.Tensor):
        super().__init__()
        self.word = nn.Embedding.from_pretrained(vectors, freeze=True)
        self.scale = nn.Parameter(torch.tensor(0.5), requires_grad=False)  # a frozen scalar (a fixed gamma)
        self.out = nn.Linear(vectors.shape[1], 3)

    def forward(self, ids):
        return self.out(self.scale * self.word(ids))


def trained_one_step(vectors, seed=0):
    torch.manual_seed(seed)
    model = Tagger(vectors)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.1)
    model(torch.tensor([[1, 2, 3]])).sum().backward()
    optimizer.step()
    return model, optimizer


def saved(path, model, optimizer, best_state):
    history = History()
    history.epochs, history.best_epoch, history.best_dev = [{"epoch": 1}], 1, 50.0
    train_state.save(
        path,
        run="r1",
        epoch=1,
        done=False,
        model=model,
        optimizer=optimizer,
        schedule=None,
        average=None,
        history=history,
        patience=3,
        best_state=best_state,
        best_dev=([0, 1], {"acc": 50.0}),
        batch_order=random.Random(0),
        seconds=1.0,
    )


def resumed(path, vectors):
    model = Tagger(vectors)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.1)
    state = train_state.load(
        path,
        run="r1",
        model=model,
        optimizer=optimizer,
        schedule=None,
        average=None,
        history=History(),
        batch_order=random.Random(1),
    )
    return model, optimizer, state


def test_the_state_leaves_frozen_weights_out_and_a_resume_restores_them(tmp_path):
    vectors = torch.randn(500, 64)
    model, optimizer = trained_one_step(vectors)
    best = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        model.out.weight.add_(1.0)  # the model moved on after its best epoch
    saved(tmp_path / "train_state.pt", model, optimizer, best)

    stored = torch.load(tmp_path / "train_state.pt", weights_only=True)
    assert "word.weight" not in stored["model"] and "word.weight" not in stored["best_state"]
    assert stored["frozen"]["names"] == ["scale", "word.weight"]

    back, back_optimizer, state = resumed(tmp_path / "train_state.pt", vectors.clone())
    for name, value in model.state_dict().items():
        assert torch.equal(back.state_dict()[name], value), name
    assert set(state["best_state"]) == set(best)
    for name, value in best.items():
        assert torch.equal(state["best_state"][name], value), name
    assert str(back_optimizer.state_dict()) == str(optimizer.state_dict())


def test_a_state_is_not_resumed_on_other_frozen_weights(tmp_path):
    vectors = torch.randn(500, 64)
    model, optimizer = trained_one_step(vectors)
    saved(tmp_path / "train_state.pt", model, optimizer, model.state_dict())
    other = vectors.clone()
    other[7, 3] += 1e-3  # one number of the vectors file changed under the same name
    with pytest.raises(WeightsError, match="frozen weights .* differ from those its training state was saved with"):
        resumed(tmp_path / "train_state.pt", other)
    with pytest.raises(WeightsError, match="other frozen parameters"):
        train_state.load(
            tmp_path / "train_state.pt",
            run="r1",
            model=nn.Linear(64, 3),
            optimizer=None,
            schedule=None,
            average=None,
            history=History(),
            batch_order=random.Random(1),
        )


def test_a_state_with_its_frozen_weights_stored_is_still_resumed(tmp_path):
    """``train-state/1``: every parameter stored, no digest."""
    vectors = torch.randn(500, 64)
    model, optimizer = trained_one_step(vectors)
    saved(tmp_path / "train_state.pt", model, optimizer, model.state_dict())
    stored = torch.load(tmp_path / "train_state.pt", weights_only=True)
    stored["format"] = "elmo-suite/train-state/1"
    del stored["frozen"]
    stored["model"], stored["best_state"] = model.state_dict(), model.state_dict()
    torch.save(stored, tmp_path / "train_state.pt")
    back, _, state = resumed(tmp_path / "train_state.pt", vectors.clone())
    assert torch.equal(back.out.weight, model.out.weight)
    assert torch.equal(state["best_state"]["word.weight"], vectors)
