"""Where each setting of a run lives, and how configurations of the earlier layout are read (the
suite's configuration of Peters et al. 2018 §3: the mix is ``elmo.*``, the frozen encoder that feeds
it is ``encoder.*``, its activation cache is ``cache.*``).

Until #28 the biLM's files, state policy, batch size and fine-tuning, and every encoder's cache
settings, lived under ``elmo.*`` next to the mix. They moved (``RENAMED``); nothing else changed:

* records, checkpoints and ``resolved_config.yaml`` files written before keep working:
  ``current_layout`` reads any configuration in today's layout (a Transformer's configuration loses the
  biLM keys it used to carry and never read);
* a run's identity is unchanged: it is computed on the earlier layout (``earlier_layout``), so a run of
  today and the same run recorded before have one digest, and a finished run is found and reused;
* the earlier names on the command line stop the command with one line naming the new key
  (``experiments.override_check``);
* a Transformer run's record names no biLM either: its encoder is under ``transformer`` (was
  ``bilm``) and its identity has no ``bilm_sha256`` (``earlier_identity`` puts it back for hashing).

Both functions accept either layout and return a new nested dict (the input is not changed).
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
# What a Transformer run's configuration held under these keys before they moved: conf/elmo/default.yaml's
# values, never read by a Transformer run but part of its identity (paths and neutral keys are not).
EARLIER_TRANSFORMER_BILM_VALUES = {
    "state": "stateless",
    "warmup_batches": 5,
    "batch_size": 64,
    "finetune": False,
    "finetune_epochs": 1,
}


def earlier_identity(identity: dict | None):
    """A run identity as it was hashed before Transformer records stopped naming a biLM: a
    Transformer run's identity (``encoder_sha256``) gets ``bilm_sha256: None`` back."""
    if isinstance(identity, dict) and "encoder_sha256" in identity and "bilm_sha256" not in identity:
        return {"bilm_sha256": None, **identity}
    return identity


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


def earlier_layout(config: dict) -> dict:
    """``config`` in the layout before #28 (the one run identities are computed on): the biLM's and the
    cache's settings under ``elmo.*``; a Transformer's configuration gets the biLM values it held then."""
    out = copy.deepcopy(config)
    cache, encoder = out.pop("cache", None), _group(out, "encoder")
    if not isinstance(out.get("elmo"), dict):
        return out
    elmo = out["elmo"]
    for old, new in CACHE_KEYS.items():
        if isinstance(cache, dict) and new in cache:
            elmo[old] = cache[new]
    if encoder_kind(out) == "bilm":
        for k in BILM_KEYS:
            if k in encoder:
                elmo[k] = encoder.pop(k)
    else:
        for k, v in EARLIER_TRANSFORMER_BILM_VALUES.items():
            elmo.setdefault(k, v)
    return out
