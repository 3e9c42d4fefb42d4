"""The folders Hydra makes for a command (``conf/config.yaml``'s resolvers ``run_dir_name``, ``mode_dir`` and
``sweep_dir``): a run directory named by its overrides under the runs root, or the user's own scratch folder for
the modes that write nothing there. Kept apart from ``run_directories`` so that registering the resolvers
(``config_store``) imports nothing of the records."""

from __future__ import annotations

import os
from pathlib import Path

from suite_common.hashing import sha256_hex


def run_dir_name(overrides: str, limit: int = 120) -> str:
    """A run directory's name: its overrides (``key:value+key:value``), or when they are longer than
    ``limit`` characters their start and a hash of the whole (file names have a length limit). A ``/``
    in a value becomes ``%2F`` and a name of dots only is prefixed, so a name never leaves the runs root."""
    overrides = overrides.replace("/", "%2F").replace("\\", "%5C")
    if overrides.strip(".") == "":
        overrides = f"_{overrides}"
    if len(overrides.encode("utf-8")) <= limit:
        return overrides
    head = overrides.encode("utf-8")[: limit - 12].decode("utf-8", "ignore").rstrip("+")
    return f"{head}+{sha256_hex(overrides)[:10]}"


def scratch_dir() -> Path:
    """Hydra's output folder for the modes that write nothing there (evaluate, predict, a dry run): the user's
    own cache (``$XDG_CACHE_HOME`` or ``~/.cache``), never a folder of the system's shared by every user."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "elmo-suite" / "scratch"


def mode_dir(mode: str, runs_root: str, task: str, overrides: str, embed_sample_out: str) -> str:
    """Hydra's output directory (``conf/config.yaml``): a run directory per configuration for train and finetune,
    ``embed_sample.out`` for embed_sample. evaluate and predict write beside their checkpoint and dry_run writes
    nothing: the directory Hydra makes for them is the user's own scratch one (``scratch_dir``: nothing is
    written into it), never a run directory another run may be using."""
    if mode == "embed_sample":
        return embed_sample_out
    if mode in ("evaluate", "predict", "dry_run"):
        return str(scratch_dir())
    return f"{runs_root}/{task}/{run_dir_name(overrides)}"


def sweep_dir(mode: str, runs_root: str) -> str:
    """Hydra's directory of a ``-m`` sweep: the runs root, or for the modes that write nothing there (a sweep's
    dry run) the same scratch directory as ``mode_dir``'s."""
    return str(scratch_dir()) if mode in ("evaluate", "predict", "dry_run") else runs_root
