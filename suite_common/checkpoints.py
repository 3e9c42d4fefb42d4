"""Reading a ``.pt`` file the one safe way: tensors and plain data only (``torch.load(weights_only=True)``),
so a received file never runs code; any file that is not that is one line naming it."""

from __future__ import annotations

import pickle
from pathlib import Path

from .errors import WeightsError


def load_tensors(path: str | Path, what: str = "checkpoint"):
    """The contents of ``path``; ``WeightsError`` in one line when it cannot be read as tensors and
    plain data (a pickled object is refused, never run)."""
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        first = str(e).strip().splitlines()
        found = next((line.strip() for line in first if "Unsupported global" in line or "GLOBAL" in line), "")
        raise WeightsError(
            f"{path}: not a {what} of tensors and plain data (it holds Python objects that loading would run"
            + (f": {found[:120]}" if found else "")
            + "); refused"
        ) from None
    except Exception as e:  # noqa: BLE001 - a truncated zip, not a torch file, a missing file: the same line
        line = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
        raise WeightsError(f"{path}: unreadable {what} ({type(e).__name__}: {line})") from None
