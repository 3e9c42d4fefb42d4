"""The frozen encoders whose layers feed a task's ELMo mixes (Peters et al. 2018 §3.2-3.4; BERT beside
them, Devlin et al. 2019): ``Encoder`` (its files and identity, layer shape, pass over text, live
and cached layer sources), one class per kind (``BiLMEncoder``, ``TransformerEncoder``), the
activation cache they share (``activation_cache``), and ``encoder_for``, the one place a run's
configuration chooses its encoder."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from suite_common.errors import ConfigError

if TYPE_CHECKING:
    from .base import Encoder

__all__ = ["BiLMEncoder", "Encoder", "TransformerEncoder", "encoder_for"]
_MODULES = {"Encoder": ".base", "BiLMEncoder": ".bilm", "TransformerEncoder": ".transformer"}


def __getattr__(name: str):
    """The encoder classes, imported when first named: they load torch, which reading the settings
    (``encoders.config``, composed before any run starts) does not need."""
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def encoder_for(run) -> Encoder:
    """The encoder a run's typed configuration names (``encoder.kind``: a ``BilmConfig`` or a
    ``TransformerConfig``), with the run's device and cache settings."""
    from .bilm import BiLMEncoder
    from .transformer import TransformerEncoder

    if run.encoder.kind == "bilm":
        return BiLMEncoder.from_config(run.encoder, run.cache, run.device)
    if run.encoder.kind == "transformer":
        return TransformerEncoder.from_config(run.encoder, run.cache, run.device)
    raise ConfigError(f"encoder.kind={run.encoder.kind!r}: must be bilm or transformer")
