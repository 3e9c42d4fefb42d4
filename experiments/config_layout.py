"""Where each setting of a run lives, and how configurations of the earlier layout are read (the
suite's configuration of Peters et al. 2018 §3: the mix is ``elmo.*``, the frozen encoder that feeds
it is ``encoder.*``, its activation cache is ``cache.*``).

Until November 2026 the biLM's files, state policy, batch size and fine-tuning, and every encoder's cache
settings, lived under ``elmo.*`` next to the mix. They moved (``RENAMED``); nothing else changed:

* records, checkpoints and ``resolved_config.yaml`` files written before keep working:
  ``current_layout`` reads any configuration in today's layout (a Transformer's configuration loses the
  biLM keys it used to carry and never read);
* a run's identity is computed on today's layout (``identity.comparable``); the committed records were
  migrated to it once (``python -m experiments.record_migration``, 2026-11-24), and a record of the
  earlier layout gets the same digest as the same run configured today;
* the earlier names on the command line stop the command with one line naming the new key
  (``experiments.override_check``).
"""

from __future__ import annotations

import copy

BILM_KEYS = (
    "options",
    "weights",
    "allow_extra_weights",
    "state",
    "warmup_batches",
    "batch_size",
    "finetune",
    "finetune_epochs",
)  # encoder.<key> of the biLM; elmo.<key> before
CACHE_KEYS = {
    "cache": "enabled",
    "cache_dir": "dir",
    "cache_dtype": "dtype",
    "cache_max_gb": "max_gb",
}  # elmo.<key> -> cache.<value>
RENAMED = {
    **{f"elmo.{k}": f"encoder.{k}" for k in BILM_KEYS},
    **{f"elmo.{k}": f"cache.{v}" for k, v in CACHE_KEYS.items()},
}


def _group(config: dict, name: str) -> dict:
    node = config.get(name)
    return node if isinstance(node, dict) else {}


def encoder_kind(config: dict) -> str:
    return _group(config, "encoder").get("kind", "bilm")


def current_layout(config: dict) -> dict:
    """``config`` with the encoder's settings under ``encoder.*`` (the biLM's; a Transformer's
    configuration drops the biLM keys) and the cache's under ``cache.*``."""
    out = copy.deepcopy(config)
    elmo = _group(out, "elmo")
    if not any(k in elmo for k in (*BILM_KEYS, *CACHE_KEYS)):
        return out
    cache = {new: elmo.pop(old) for old, new in CACHE_KEYS.items() if old in elmo}
    moved = {k: elmo.pop(k) for k in BILM_KEYS if k in elmo}
    if cache:
        out["cache"] = {**_group(out, "cache"), **cache}
    if encoder_kind(out) == "bilm" and moved:
        out["encoder"] = {**_group(out, "encoder"), **moved}
    return out
