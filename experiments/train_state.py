"""A training run that resumes where it stopped (the paper profile's runs take hours on a CPU: NER's 50
epochs, SST-5's; Peters et al. 2018 appendix A).

After every epoch the trainer writes ``train_state.pt`` into the run directory, complete or not at all
(``torch_save_atomic``): the model, the optimizer, the learning-rate schedule and the weight average,
the history and patience, the best model so far with its dev predictions, and every random number
generator the training draws from (Python's, NumPy's, torch's, and the batch order's). A run launched
again with the same identity finds it and continues with the next epoch, so a resumed run draws the
same dropout masks and batch orders as one that never stopped and, on the same machine and number of
threads, ends with the same numbers. The file is deleted once the run's record is written. (A biLM
run live with a carried state, ``encoder.state=stateful cache.enabled=false``, restarts its state.)
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch

from suite_common.atomic_files import torch_save_atomic
from suite_common.checkpoints import load_tensors
from suite_common.errors import WeightsError

FORMAT = "elmo-suite/train-state/1"


def plain(x):
    """``x`` with NumPy scalars (metrics from seqeval, for one) as Python numbers: what
    ``torch.load(weights_only=True)`` reads back."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x)
    return x.item() if isinstance(x, np.generic) else x


def _numpy_state() -> list:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return [name, keys.tolist(), pos, has_gauss, cached]


def _set_numpy_state(state: list) -> None:
    name, keys, pos, has_gauss, cached = state
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))


def save(
    path: Path,
    *,
    run: str | None,
    epoch: int,
    done: bool,
    model,
    optimizer,
    schedule,
    average,
    history,
    patience: int,
    best_state: dict | None,
    best_dev,
    batch_order: random.Random,
    seconds: float,
) -> None:
    """The state at the end of ``epoch`` (1-based); ``done``: training stopped there."""
    torch_save_atomic(
        {
            "format": FORMAT,
            "run": run,
            "epoch": epoch,
            "done": done,
            "seconds": seconds,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict() if schedule is not None else None,
            "average": average.state_dict() if average is not None else None,
            "history": plain(
                {"epochs": history.epochs, "best_epoch": history.best_epoch, "best_dev": history.best_dev}
            ),
            "patience": patience,
            "best_state": best_state,
            "best_dev": plain(list(best_dev)) if best_dev is not None else None,
            "rng": {
                "python": list(random.getstate()),
                "numpy": _numpy_state(),
                "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
                "batch_order": list(batch_order.getstate()),
            },
        },
        path,
    )


def _tuples(x):
    """``random.getstate`` wants tuples where the saved state has lists."""
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def read(path: Path, run: str | None) -> dict:
    """The training state at ``path``, refused (``WeightsError`` naming it; the file is left as it is)
    when it is not one or is another run's (identity digest ``run``)."""
    try:
        state = load_tensors(path, "training state")
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            found = state.get("format") if isinstance(state, dict) else type(state).__name__
            raise WeightsError(f"{path}: not a training state (format {found!r})")
    except WeightsError as e:  # any unreadable state is the same error
        raise WeightsError(f"{e}; delete it to train from the start") from None
    if state.get("run") != run:
        raise WeightsError(
            f"{path}: the training state of another run (identity {state.get('run')}, this one is "
            f"{run}); move or delete it to train this one"
        )
    return state


def load(
    path: Path, *, run: str | None, model, optimizer, schedule, average, history, batch_order: random.Random
) -> dict:
    """Restore the state of the run ``run`` (its identity digest) into the given objects; returns
    ``epoch``, ``done``, ``patience``, ``best_state``, ``best_dev`` and ``seconds``. A file that is not
    a training state, or is another run's (a stopped run of another configuration launched under the
    same name), is an error naming it; the file is left as it is."""
    state = read(path, run)
    try:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if schedule is not None:
            schedule.load_state_dict(state["schedule"])
        if average is not None:
            average.load_state_dict(state["average"])
    except Exception as e:  # noqa: BLE001 - any unreadable or mismatched state is the same error
        raise WeightsError(
            f"{path}: a training state that does not fit this run's model ({type(e).__name__}: "
            f"{e}); delete it to train from the start"
        ) from None
    history.epochs, history.best_epoch, history.best_dev = (
        state["history"][k] for k in ("epochs", "best_epoch", "best_dev")
    )
    rng = state["rng"]
    random.setstate(_tuples(rng["python"]))
    _set_numpy_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    if rng.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    batch_order.setstate(_tuples(rng["batch_order"]))
    best_dev = tuple(state["best_dev"]) if state["best_dev"] is not None else None
    return {
        "epoch": state["epoch"],
        "done": state["done"],
        "patience": state["patience"],
        "best_state": state["best_state"],
        "best_dev": best_dev,
        "seconds": state["seconds"],
    }
