"""Transformer encoders shipped inside the package (see each folder's MODEL_CARD.md)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def model_dir(name: str = "small") -> Path:
    """The directory of a shipped model (``save_pretrained`` layout)."""
    path = ROOT / name
    if not (path / "config.json").exists():
        available = sorted(p.name for p in ROOT.iterdir() if (p / "config.json").exists())
        raise FileNotFoundError(f"no shipped Transformer named {name!r} (available: {available or 'none'})")
    return path
