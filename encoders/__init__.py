"""The frozen encoders whose layers feed a task's ELMo mixes (Peters et al. 2018 §3.2-3.4; BERT beside
them, Devlin et al. 2019): ``Encoder`` (its files and identity, layer shape, pass over text, live
and cached layer sources), one class per kind (``BiLMEncoder``, ``TransformerEncoder``), the
activation cache they share (``activation_cache``), and ``encoder_for``, the one place a run's
configuration chooses its encoder."""

from __future__ import annotations

from suite_common.errors import ConfigError

from .base import CacheSettings, Encoder
from .bilm import BiLMEncoder
from .transformer import TransformerEncoder

__all__ = ["BiLMEncoder", "CacheSettings", "Encoder", "TransformerEncoder", "encoder_for"]


def encoder_for(cfg) -> Encoder:
    """The encoder a composed configuration names: ``encoder.kind`` (configurations saved before the
    key existed mean the biLM), with the run's device and cache settings."""
    encoder = cfg.get("encoder") or {}
    kind = encoder.get("kind", "bilm")
    if kind == "bilm":
        return BiLMEncoder.from_config(cfg)
    if kind == "transformer":
        return TransformerEncoder.from_config(cfg)
    raise ConfigError(f"encoder.kind={kind!r}: must be bilm or transformer")
