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

Frozen parameters (pretrained word vectors, a frozen biLM) are not stored: the run builds them again
from its own files, and the state keeps their SHA-256 so that a resume on weights that differ (another
vectors file under the same name) is refused. That keeps the file small enough to commit, so a run
longer than one machine's life continues on the next (``git add -f <run dir>/train_state.pt``). A
state written before this (``train-state/1``, frozen weights included) is still resumed.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch

from suite_common.atomic_files import torch_save_atomic
from suite_common.checkpoints import load_tensors
from suite_common.errors import WeightsError
from suite_common.hashing import new_sha256

FORMAT = "elmo-suite/train-state/2"
FORMATS = ("elmo-suite/train-state/1", FORMAT)  # 1: every parameter stored, frozen ones included


def frozen_names(model) -> set[str]:
    """The state-dict keys of ``model``'s parameters that training does not change."""
    return {n for n, p in model.named_parameters(remove_duplicate=False) if not p.requires_grad}


def frozen_digest(model, names: set[str]) -> str:
    """The SHA-256 of the frozen parameters ``names`` (their names, shapes, types and bytes)."""
    digest = new_sha256()
    state = model.state_dict()
    for name in sorted(names):
        t = state[name].detach().cpu().contiguous().reshape(-1)  # a scalar too: bytes of a flat view
        digest.update(f"{name}:{tuple(state[name].shape)}:{t.dtype};".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def _trained(state: dict | None, frozen: set[str]) -> dict | None:
    return None if state is None else {k: v for k, v in state.items() if k not in frozen}


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
    """The state at the end of ``epoch`` (1-based); ``done``: training stopped there. The model and the
    best model are stored without their frozen parameters (named, with their digest)."""
    frozen = frozen_names(model)
    torch_save_atomic(
        {
            "format": FORMAT,
            "run": run,
            "epoch": epoch,
            "done": done,
            "seconds": seconds,
            "frozen": {"names": sorted(frozen), "sha256": frozen_digest(model, frozen)},
            "model": _trained(model.state_dict(), frozen),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict() if schedule is not None else None,
            "average": average.state_dict() if average is not None else None,
            "history": plain(
                {"epochs": history.epochs, "best_epoch": history.best_epoch, "best_dev": history.best_dev}
            ),
            "patience": patience,
            "best_state": _trained(best_state, frozen),
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
        if not isinstance(state, dict) or state.get("format") not in FORMATS:
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
    best_state = _with_frozen(path, state, model)
    try:
        loaded = model.load_state_dict(state["model"], strict="frozen" not in state)
        if "frozen" in state and (set(loaded.missing_keys) != set(state["frozen"]["names"]) or loaded.unexpected_keys):
            raise KeyError(f"missing {sorted(loaded.missing_keys)[:3]}, unexpected {loaded.unexpected_keys[:3]}")
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
        "best_state": best_state,
        "best_dev": best_dev,
        "seconds": state["seconds"],
    }


def _with_frozen(path: Path, state: dict, model) -> dict | None:
    """Check that ``model``'s frozen parameters are the ones ``state`` was saved with, and return the
    state's best model completed with them (a ``train-state/1`` file's best model as it is)."""
    if "frozen" not in state:
        return state["best_state"]
    names = set(state["frozen"]["names"])
    if names != frozen_names(model):
        raise WeightsError(
            f"{path}: a training state saved with other frozen parameters ({len(names)} there, "
            f"{len(frozen_names(model))} in this run's model); delete it to train from the start"
        )
    if frozen_digest(model, names) != state["frozen"]["sha256"]:
        raise WeightsError(
            f"{path}: this run's frozen weights (pretrained vectors or biLM) differ from those its training "
            "state was saved with; restore those files, or delete the state to train from the start"
        )
    if state["best_state"] is None:
        return None
    current = model.state_dict()
    return {**state["best_state"], **{n: current[n].clone() for n in names}}
