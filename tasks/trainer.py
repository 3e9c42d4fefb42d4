"""The one trainer every task uses (Peters et al. 2018 §3.3 and appendix A): the biLM is frozen and
read from the activation cache; the task model and its ELMo mixes are trained with Adam, gradient
clipping, the λ‖w‖² regularizer of every mix added to the loss, early stopping on the dev metric
with patience, and the best model kept. Model selection uses dev only; test, when given, is
evaluated once at the end with the selected model.
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
from tqdm import tqdm


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class History:
    epochs: list = field(default_factory=list)
    best_epoch: int = -1
    best_dev: float = -math.inf


class LiveLayers:
    """Runs the biLM per batch (``elmo.cache=false``): the same interface as ``CachedLayers``."""

    def __init__(self, bilm, sentences: list[list[str]]):
        from elmo_core.characters import batch_to_ids
        self.bilm, self.sentences, self.to_ids = bilm, sentences, batch_to_ids

    def batch(self, indices):
        with torch.inference_mode():
            out = self.bilm(self.to_ids([self.sentences[i] for i in indices]))
        return out.layers.clone(), out.mask.clone()


@torch.no_grad()
def predict(task, model, ds, layers, batch_size: int) -> list:
    model.eval()
    out = []
    for idx in task.batches(ds, batch_size, shuffle=False):
        batch = task.batch(ds, idx)
        out += task.predict(model, batch, task.elmo_inputs(model, layers, ds, idx, batch))
    return out


def fit(task, model, splits: dict, layers: dict, cfg, out_dir: Path, progress: bool = True) -> dict:
    """Train ``model`` on splits['train'], select on splits['dev']; returns metrics and history."""
    t = cfg.trainer
    set_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=t.lr)
    history, patience, best_state = History(), t.patience, None
    started = time.time()
    train, dev = splits["train"], splits["dev"]
    for epoch in range(t.max_epochs):
        model.train()
        total, steps = 0.0, 0
        order = task.batches(train, t.batch_size, shuffle=True, rng=rng)
        bar = tqdm(order, desc=f"epoch {epoch + 1}/{t.max_epochs}", unit="batch", disable=not progress,
                   mininterval=2, leave=False)
        for idx in bar:
            batch = task.batch(train, idx)
            loss = model.loss(batch, task.elmo_inputs(model, layers.get("train"), train, idx, batch))
            loss = loss + model.features.regularizer(cfg.elmo.l2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if t.grad_clip:
                torch.nn.utils.clip_grad_norm_(params, t.grad_clip)
            optimizer.step()
            total, steps = total + float(loss.detach()), steps + 1
            bar.set_postfix(loss=f"{total / steps:.4f}", refresh=False)
        dev_metrics = task.score(dev, predict(task, model, dev, layers.get("dev"), t.eval_batch_size))
        value = dev_metrics[task.metric]
        history.epochs.append({"epoch": epoch + 1, "train_loss": total / max(steps, 1),
                               f"dev_{task.metric}": round(value, 4), "seconds": round(time.time() - started, 1)})
        print(f"epoch {epoch + 1}: train loss {total / max(steps, 1):.4f}, dev {task.metric} {value:.2f}", flush=True)
        if value > history.best_dev:
            history.best_dev, history.best_epoch, patience = value, epoch + 1, t.patience
            best_state = copy.deepcopy(model.state_dict())
        else:
            patience -= 1
            if patience <= 0:
                break
    model.load_state_dict(best_state)
    result = {"epochs": history.epochs, "best_epoch": history.best_epoch,
              "train_seconds": round(time.time() - started, 1), "predictions": {}}
    for split in ("dev", "test"):  # the selected model; test (when given) only now, once
        if split in splits:
            result["predictions"][split] = predict(task, model, splits[split], layers.get(split), t.eval_batch_size)
            result[split] = task.score(splits[split], result["predictions"][split])
    return result
