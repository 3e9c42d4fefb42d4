"""The encoder and activation-cache settings of a run, typed (``encoder=bilm|transformer``, ``cache.*``;
their defaults are the base of the composed configuration, ``experiments.config_store``; Peters et al.
2018 §3.4: the frozen biLM whose layers ELMo mixes). Each field declares its default, its accepted values
and its part in a run's identity (``suite_common.typed_config``): a biLM counts by the SHA-256 of its
weights and of its options, a Transformer by that of its directory's files, never by their paths."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.remote_files import PRESETS
from suite_common.typed_config import (
    LOCATION,
    NEUTRAL,
    FilePath,
    boolean,
    file_setting,
    integer,
    number,
    one_of,
    setting,
    text_or_none,
)

STATE_POLICIES = ("stateless", "stateful", "stateful_warmup")


@dataclass(frozen=True)
class BilmConfig:
    kind: str = setting("bilm", one_of("bilm"))
    # any biLM in the original format (options.json + weights.hdf5), a path or an https:// URL; null: the embedded one
    options: FilePath | None = file_setting("bilm_options_sha256")
    weights: FilePath | None = file_setting("bilm_sha256")
    # a published biLM by name instead (its files count by content, as options and weights)
    preset: str | None = setting(None, lambda v: None if v is None else one_of(*PRESETS)(v), identity=LOCATION)
    allow_extra_weights: bool = setting(False, boolean, identity=NEUTRAL)
    state: str = setting("stateless", one_of(*STATE_POLICIES))
    warmup_batches: int = setting(5, integer(0))
    batch_size: int = setting(64, integer(1))
    finetune: bool = setting(False, boolean)
    finetune_epochs: int = setting(1, integer(1))


@dataclass(frozen=True)
class TransformerConfig:
    kind: str = setting("transformer", one_of("transformer"))
    # a save_pretrained directory or a hub name; null: the embedded small BERT (its files count by content)
    model: FilePath | None = file_setting("encoder_sha256")
    revision: str | None = setting(None, text_or_none)
    pooling: str = setting("first", one_of("first", "mean"))
    max_length: int | None = setting(None, integer(3, optional=True))
    batch_size: int = setting(32, integer(1))
    # a profile's biLM settings (the paper profile fine-tunes the biLM for SQuAD and SNLI, §3.4), which a
    # Transformer run holds without using them: only the biLM is fine-tuned
    finetune: bool = setting(False, boolean, identity=NEUTRAL)
    finetune_epochs: int = setting(1, integer(1), identity=NEUTRAL)


@dataclass(frozen=True)
class CacheConfig:
    enabled: bool = setting(True, boolean)
    dir: str = setting(".cache/activations", identity=LOCATION)
    dtype: str = setting("float32", one_of("float32", "float16"))
    max_gb: float = setting(100, number(0, low_open=True), identity=NEUTRAL)


def encoder_config_class(mapping) -> type:
    kind = (mapping or {}).get("kind", "bilm")
    if kind not in ("bilm", "transformer"):
        from suite_common.errors import ConfigError

        raise ConfigError(f"encoder.kind={kind!r}: must be one of bilm, transformer")
    return BilmConfig if kind == "bilm" else TransformerConfig
