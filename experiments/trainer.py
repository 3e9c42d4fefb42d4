"""The one trainer every task uses (Peters et al. 2018 §3.3 and appendix A): the biLM is frozen and
read from the activation cache; the task model and its ELMo mixes are trained with Adam or Adadelta,
gradient clipping, the λ‖w‖² regularizer of every mix added to the loss, optional ℓ2 on weight
matrices, an optional exponential moving average of the weights for evaluation, optional halving
of the learning rate when dev stops improving, early stopping on the dev metric with patience, and
the best model kept. Model selection uses dev only; test, when given, is
evaluated once at the end with the selected model.

A batch is ``task.make_batch(split, indices)``: the task's tensors with the biLM layers of each
input side; the model applies its ELMo mixes itself. The trainer asks only the model's contract
(``layers.TaskModel``: ``forward`` -> ``TaskOutput``, ``regularizer()``, ``parameter_groups``), the
task's ``predict`` and ``score``, the run's ``trainer`` group (``tasks.common.config.TrainerConfig``), its seed,
its device and its passes per epoch: nothing of ``cfg.elmo`` or ``cfg.data``.
"""

from __future__ import annotations

import copy
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from suite_common.errors import ConfigError, SuiteError
from tasks.base import TaskSplit
from tasks.common.config import TrainerConfig

from . import train_state, training_log


class TrainingDiverged(SuiteError):
    """The loss became NaN or infinite."""


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class History:
    epochs: list = field(default_factory=list)
    best_epoch: int = -1
    best_dev: float = -math.inf


def make_optimizer(model, config: TrainerConfig) -> torch.optim.Optimizer:
    """Adam or Adadelta over the model's own groups (``TaskModel.parameter_groups``): ℓ2
    ``weight_decay`` on the recurrent and feed-forward weight matrices only — not on biases,
    embeddings, CRF transitions or ELMo's mixing weights (γ, s), whose regularizer is λ‖w‖²."""
    groups = model.parameter_groups(config.weight_decay)
    if config.optimizer == "adam":
        return torch.optim.Adam(groups, lr=config.lr)
    if config.optimizer == "adadelta":
        return torch.optim.Adadelta(groups, lr=config.lr, rho=config.adadelta_rho)
    raise ConfigError(f"trainer.optimizer must be adam or adadelta, got {config.optimizer!r}")


def train_step(model, batch: dict, optimizer, config: TrainerConfig, params: list, norm: list | None = None) -> float:
    """One update: the model's loss plus its mixes' λ‖w‖², clipped gradients, one optimizer step.
    ``norm``: a list that receives the gradient norm before clipping (for the training log)."""
    loss = model(batch).loss + model.regularizer()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if config.grad_clip:
        total = torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
    elif norm is not None:
        total = torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])
    if norm is not None:
        norm.append(float(total))
    optimizer.step()
    return float(loss.detach())


def on_device(batch, device: torch.device | str):
    """A batch (tensors in dicts and lists, any depth) with every tensor on ``device``; the rest as it is.
    Batches are made on the CPU (the cache is read there); the model's device is where they go."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {k: on_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)) and any(isinstance(v, (torch.Tensor, dict, list, tuple)) for v in batch):
        return type(batch)(on_device(v, device) for v in batch)
    return batch


def model_device(model) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def predict(task, model, split: TaskSplit, batch_size: int) -> list:
    model.eval()
    device = model_device(model)
    out = []
    for idx in task.batches(split.examples, batch_size, shuffle=False):
        out += task.predict(model, on_device(task.make_batch(split, idx), device))
    return out


def passes_per_epoch(cfg) -> int:
    """Passes over the training split per epoch (dev is evaluated after each epoch): 1, or with
    ``trainer.equal_updates`` and ``data.fraction`` f < 1, round(1/f), so that a fraction of the data
    gets as many updates (and as many dev evaluations) as the whole of it (Figure 1)."""
    fraction = float(getattr(cfg.data, "fraction", 1.0))  # the probes' data have no fraction
    return max(1, round(1 / fraction)) if cfg.trainer.equal_updates and fraction < 1 else 1


def epochs_for(t: TrainerConfig, updates_per_epoch: int) -> int:
    """The most epochs a run trains: ``trainer.max_epochs``, raised where that many epochs of
    ``updates_per_epoch`` updates make fewer than ``trainer.min_updates`` (early stopping still applies)."""
    return max(t.max_epochs, -(-t.min_updates // max(updates_per_epoch, 1)))


def halving_patience(t: TrainerConfig, updates_per_epoch: int) -> int:
    """The epochs without a better dev score that ``trainer.lr_halving`` lets pass before it halves the
    learning rate: none by default (A.3: "halved whenever dev accuracy fails to improve", one SNLI epoch),
    or as many as make ``trainer.lr_halving_updates`` updates, so that a smaller stand-in for the paper's
    data set (SICK's 139 updates an epoch for SNLI's 17,193) halves after as many updates, not epochs."""
    return max(0, -(-t.lr_halving_updates // max(updates_per_epoch, 1)) - 1)


def fit(
    task,
    model,
    splits: dict[str, TaskSplit],
    t: TrainerConfig,
    seed: int = 0,
    device: str = "cpu",
    passes: int = 1,
    progress: bool = True,
    state_path: Path | None = None,
    run: str | None = None,
    log=None,
) -> dict:
    """Train ``model`` on splits['train'], select on splits['dev']; returns metrics and history.
    ``t``: the run's ``trainer`` group; ``seed``: the run's; ``device``: where the model and each batch
    go; ``passes``: passes over the training split per epoch (``passes_per_epoch``).
    ``state_path``: the training state is saved there after every epoch, and a state found there is
    resumed (``train_state``; ``run``: the run's identity digest, stored with it and checked when
    resuming); the result then has ``resumed_from_epoch``. ``log``: a ``training_log.TrainingLog`` that
    receives the curves (per update and per epoch), or None."""
    set_seed(seed)
    rng = random.Random(seed)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(model, t)
    train, dev = splits["train"], splits["dev"]
    per_epoch = passes * len(task.batches(train.examples, t.batch_size, shuffle=True, rng=random.Random(0)))
    halve, ema = _schedule_and_average(model, optimizer, t, per_epoch)
    evaluated = ema.module if ema is not None else model  # the paper's SQuAD model is evaluated with EMA weights
    history, patience, best_state, best_dev = History(), t.patience, None, None
    first_epoch, done, resumed_from, elapsed = 0, False, None, 0.0
    parts = dict(model=model, optimizer=optimizer, schedule=halve, average=ema, history=history, batch_order=rng)
    if state_path is not None and Path(state_path).exists():
        state = train_state.load(state_path, run=run, **parts)
        first_epoch, done, patience, elapsed = state["epoch"], state["done"], state["patience"], state["seconds"]
        best_state, best_dev, resumed_from = state["best_state"], state["best_dev"], state["epoch"]
        print(f"resuming after epoch {first_epoch} ({state_path})", flush=True)
    started = time.time() - elapsed
    epochs = epochs_for(t, per_epoch)
    if epochs > t.max_epochs:
        print(f"{epochs} epochs, not {t.max_epochs}: {per_epoch} updates an epoch, at least {t.min_updates} in all")
    for epoch in range(first_epoch, 0 if done else epochs):
        where = (device, passes, epoch, epochs, progress)
        total, steps = _train_epoch(task, model, train, t, optimizer, params, ema, rng, where, log)
        dev_predictions = predict(task, evaluated, dev, t.eval_batch_size)
        dev_metrics = task.score(dev.examples, dev_predictions)
        value = dev_metrics[task.metric]
        if halve is not None:
            halve.step(value)
        row = {"epoch": epoch + 1, "train_loss": total / max(steps, 1), f"dev_{task.metric}": round(value, 4)}
        history.epochs.append({**row, "seconds": round(time.time() - started, 1)})
        print(f"epoch {epoch + 1}: train loss {total / max(steps, 1):.4f}, dev {task.metric} {value:.2f}", flush=True)
        if log is not None:
            curves = {"epoch/train_loss": total / max(steps, 1), f"epoch/dev_{task.metric}": value}
            log.scalars({**curves, **training_log.mix_weights(model)}, epoch + 1)
        if value > history.best_dev or t.keep == "last":
            history.best_dev, history.best_epoch, patience = value, epoch + 1, t.patience
            best_state, best_dev = copy.deepcopy(evaluated.state_dict()), (dev_predictions, dev_metrics)
        else:
            patience -= 1
        done = patience <= 0 or epoch + 1 == epochs
        if state_path is not None:
            train_state.save(
                state_path,
                run=run,
                epoch=epoch + 1,
                done=done,
                patience=patience,
                best_state=best_state,
                best_dev=best_dev,
                seconds=time.time() - started,
                **parts,
            )
        if done:
            break
    model.load_state_dict(best_state)
    return _result(task, model, splits, t, history, best_dev, resumed_from, started)


def _schedule_and_average(model, optimizer, t: TrainerConfig, updates_per_epoch: int):
    """The learning-rate halving on a dev plateau (``trainer.lr_halving``, after ``halving_patience``
    epochs without a better score) and the exponential moving average of the weights (``trainer.ema``),
    each None when off."""
    halve = None
    if t.lr_halving:
        patience = halving_patience(t, updates_per_epoch)
        halve = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=patience)
        if patience:
            print(
                f"the learning rate halves after {patience + 1} epochs without a better dev score "
                f"(trainer.lr_halving_updates={t.lr_halving_updates}, {updates_per_epoch} updates an epoch)"
            )
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(t.ema), use_buffers=True) if t.ema else None
    return halve, ema


def _result(task, model, splits, t: TrainerConfig, history, best_dev, resumed_from, started: float) -> dict:
    """What ``fit`` returns: the history, the selected epoch's dev predictions and metrics (evaluation is
    deterministic: no second dev pass), and the selected model's test predictions when a test split is given."""
    result = {
        "epochs": history.epochs,
        "best_epoch": history.best_epoch,
        "train_seconds": round(time.time() - started, 1),
        "predictions": {},
    }
    if resumed_from is not None:
        result["resumed_from_epoch"] = resumed_from
    result["predictions"]["dev"], result["dev"] = best_dev
    if "test" in splits:  # the selected model on test (when given) only now, once
        result["predictions"]["test"] = predict(task, model, splits["test"], t.eval_batch_size)
        result["test"] = task.score(splits["test"].examples, result["predictions"]["test"])
    return result


def _train_epoch(task, model, train: TaskSplit, t: TrainerConfig, optimizer, params, ema, rng, where: tuple, log=None):
    """One epoch (``where``: the device, the number of shuffled passes over the training split, the
    epoch's index, the run's epochs and whether to show progress); returns the summed loss and the number of updates.
    A non-finite loss raises ``TrainingDiverged``. ``log``: gets each update's learning rate and gradient
    norm, numbered from the first update of the run (``epoch × updates per epoch + k``)."""
    device, passes, epoch, epochs, progress = where
    model.train()
    total, steps = 0.0, 0
    order = [idx for _ in range(passes) for idx in task.batches(train.examples, t.batch_size, shuffle=True, rng=rng)]
    bar = tqdm(
        order, desc=f"epoch {epoch + 1}/{epochs}", unit="batch", disable=not progress, mininterval=2, leave=False
    )
    norm = [] if log is not None else None
    for idx in bar:
        loss = train_step(model, on_device(task.make_batch(train, idx), device), optimizer, t, params, norm)
        if not math.isfinite(loss):  # a diverged model is no result: no record, no checkpoint
            raise TrainingDiverged(
                f"the training loss is {loss} at epoch {epoch + 1}, batch {steps + 1}: training diverged "
                f"(trainer.lr={t.lr} too high?); nothing was recorded"
            )
        if ema is not None:
            ema.update_parameters(model)
        if log is not None:
            update = {
                "update/lr": optimizer.param_groups[0]["lr"],
                **({"update/grad_norm": norm.pop()} if norm else {}),
            }
            log.scalars(update, epoch * len(order) + steps + 1)
        total, steps = total + loss, steps + 1
        bar.set_postfix(loss=f"{total / steps:.4f}", refresh=False)
    return total, steps
