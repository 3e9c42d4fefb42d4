"""The encoder and activation-cache settings of a run, typed (``encoder=bilm|transformer``, ``cache.*``;
their defaults are the base of the composed configuration, ``experiments.config_store``; Peters et al.
2018 §3.4: the frozen biLM whose layers ELMo mixes). Each field declares its default, its accepted values
and its part in a run's identity (``suite_common.typed_config``): a biLM counts by the SHA-256 of its
weights and of its options, a Transformer by that of its directory's files, never by their paths."""

from __future__ import annotations

from typing import Literal

from suite_common.remote_files import PRESETS
from suite_common.typed_config import (
    FilePath,
    Flag,
    PathText,
    Text,
    file_setting,
    integer,
    number,
    setting,
    settings_group,
)

STATE_POLICIES = ("stateless", "stateful", "stateful_warmup")


@settings_group
class BilmConfig:
    kind: Literal["bilm"] = setting("bilm")
    # any biLM in the original format (options.json + weights.hdf5), a path or an https:// URL; null: the embedded one
    options: FilePath | None = file_setting("bilm_options_sha256")
    weights: FilePath | None = file_setting("bilm_sha256")
    # a published biLM by name instead (its files count by content, as options and weights)
    preset: Literal[tuple(PRESETS)] | None = setting(None, counts=False)
    allow_extra_weights: Flag = setting(False, counts=False)
    state: Literal[STATE_POLICIES] = setting("stateless")
    warmup_batches: integer(0) = setting(5)
    batch_size: integer(1) = setting(64)
    finetune: Flag = setting(False)
    finetune_epochs: integer(1) = setting(1)
    # the fine-tuning's own seed (its dropout masks), the same for every seed of the runs that read it
    finetune_seed: integer(0) = setting(0, added_after_records=True)


@settings_group
class TransformerConfig:
    kind: Literal["transformer"] = setting("transformer")
    # a save_pretrained directory or a hub name; null: the embedded small BERT (its files count by content)
    model: FilePath | None = file_setting("encoder_sha256")
    revision: Text | None = setting(None)
    pooling: Literal["first", "mean"] = setting("first")
    max_length: integer(3) | None = setting(None)
    batch_size: integer(1) = setting(32)
    # a profile's biLM settings (the paper profile fine-tunes the biLM for SQuAD and SNLI, §3.4), which a
    # Transformer run holds without using them: only the biLM is fine-tuned
    finetune: Flag = setting(False, counts=False, in_base=False)
    finetune_epochs: integer(1) = setting(1, counts=False, in_base=False)


@settings_group
class CacheConfig:
    enabled: Flag = setting(True)
    dir: PathText = setting(".cache/activations", counts=False)
    dtype: Literal["float32", "float16"] = setting("float32")
    max_gb: number(0, low_open=True) = setting(100, counts=False)
