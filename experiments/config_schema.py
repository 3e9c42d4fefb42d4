"""Every value a run cannot use is rejected at start-up, with one line naming the key (Peters et al.
2018's settings live in ``conf/``; which values make sense is declared beside each typed field,
``run_config`` and the groups it builds). Hydra already rejects keys that no YAML file declares;
``validate`` builds the typed configuration, which also rejects a key no field declares."""

from __future__ import annotations

import os

from omegaconf import DictConfig, OmegaConf

from .run_config import SEED_MAX, RunConfig

THREADS_MAX = 4 * (os.cpu_count() or 1)  # beyond this OpenMP fails to start its threads (not a setting to try)

__all__ = ["SEED_MAX", "THREADS_MAX", "validate"]


def validate(cfg: DictConfig) -> RunConfig:
    """The typed configuration of ``cfg``; ``ConfigError`` names the first key whose value a run cannot use."""
    return RunConfig.from_resolved(OmegaConf.to_container(cfg, resolve=True))
