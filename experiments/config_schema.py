"""The configuration's schema: every value a run cannot use is rejected at start-up, with one line
naming the key (Peters et al. 2018's settings live in ``conf/``; this says which values make sense).

Hydra already rejects unknown keys; ``validate`` checks types, ranges and choices of the keys that
are present. Each rule is ``key -> check``; a check returns None or what is wrong.
"""

from __future__ import annotations

import math
import os
import re
from numbers import Real

from omegaconf import DictConfig, OmegaConf

from encoders.bilm import STATE_POLICIES
from suite_common.errors import ConfigError
from suite_common.remote_files import PRESETS
from tasks.common.layers import EMBEDDING_INITS


def one_of(*choices):
    return lambda v: None if v in choices else f"must be one of {', '.join(map(str, choices))}"


def boolean(v):
    return None if isinstance(v, bool) else "must be true or false"


def integer(low: int | None = None, high: int | None = None):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int):
            return "must be an integer"
        if low is not None and v < low:
            return f"must be at least {low}"
        return f"must be at most {high}" if high is not None and v > high else None

    return check


def number(low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, Real):
            return "must be a number"
        if not math.isfinite(v):
            return "must be a finite number"
        if low is not None and (v <= low if low_open else v < low):
            return f"must be {'greater than' if low_open else 'at least'} {low}"
        if high is not None and (v >= high if high_open else v > high):
            return f"must be {'less than' if high_open else 'at most'} {high}"
        return None

    return check


def device(v):
    return (
        None if isinstance(v, str) and re.fullmatch(r"cpu|cuda(:\d+)?|mps", v) else "must be cpu, cuda, cuda:N or mps"
    )


PROBABILITY = number(0, 1, high_open=True)
SEED_MAX = 2**32 - 1  # numpy's seed range; Python's and torch's are wider
THREADS_MAX = 4 * (os.cpu_count() or 1)  # beyond this OpenMP fails to start its threads (not a setting to try)
RULES = {
    "mode": one_of("train", "evaluate", "predict", "finetune", "embed_sample", "dry_run"),
    "seed": integer(0, SEED_MAX),
    "device": device,
    "threads": lambda v: (
        None
        if v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= THREADS_MAX)
        else f"must be auto or a whole number from 1 to {THREADS_MAX} (this machine has {os.cpu_count()} CPUs)"
    ),
    "elmo.position": one_of("none", "input", "output", "both", "paper"),
    "elmo.mix": one_of("all", "last", "average"),
    "elmo.l2": number(0),
    "elmo.dropout": PROBABILITY,
    "elmo.layer_norm": boolean,
    "encoder.state": one_of(*STATE_POLICIES),
    "encoder.warmup_batches": integer(0),
    "cache.enabled": boolean,
    "cache.dtype": one_of("float32", "float16"),
    "cache.max_gb": number(0, low_open=True),
    "encoder.finetune": boolean,
    "encoder.finetune_epochs": integer(1),
    "encoder.allow_extra_weights": boolean,
    "encoder.kind": one_of("bilm", "transformer"),
    "encoder.pooling": one_of("first", "mean"),
    "encoder.max_length": integer(3),
    "encoder.batch_size": integer(1),
    "encoder.preset": one_of(*PRESETS),
    "task.model.embedding_init": one_of(*EMBEDDING_INITS),
    "trainer.optimizer": one_of("adam", "adadelta"),
    "trainer.lr": number(0, low_open=True),
    "trainer.adadelta_rho": number(0, 1, low_open=True, high_open=True),
    "trainer.batch_size": integer(1),
    "trainer.eval_batch_size": integer(1),
    "trainer.max_epochs": integer(1),
    "trainer.patience": integer(1),
    "trainer.grad_clip": number(0),
    "trainer.weight_decay": number(0),
    "trainer.ema": PROBABILITY,
    "trainer.lr_halving": boolean,
    "trainer.equal_updates": boolean,
    "data.fraction": number(0, 1, low_open=True),
}
DROPOUT_KEYS = re.compile(r"(^|_)dropout$")  # every task.model.*dropout is a probability


def validate(cfg: DictConfig) -> None:
    """Raise ``ConfigError`` naming the first key whose value a run cannot use."""
    checks = dict(RULES)
    model = OmegaConf.select(cfg, "task.model")
    if isinstance(model, DictConfig):
        checks.update({f"task.model.{k}": PROBABILITY for k in model if DROPOUT_KEYS.search(str(k))})
    for key, check in checks.items():
        value = OmegaConf.select(cfg, key, throw_on_missing=False, default=None)
        if value is None:
            continue
        problem = check(value)
        if problem:
            raise ConfigError(f"{key}={value!r}: {problem}")
    for key, value in _numbers(OmegaConf.to_container(cfg, resolve=False)):  # any other number: finite
        if not math.isfinite(value):
            raise ConfigError(f"{key}={value!r}: must be a finite number")


def _numbers(node, prefix: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numbers(v, f"{prefix}{k}.")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, f"{prefix[:-1]}[{i}].")
    elif isinstance(node, float):
        yield prefix[:-1], node
