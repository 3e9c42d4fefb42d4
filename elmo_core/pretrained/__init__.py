"""biLMs shipped inside the package (see each folder's MODEL_CARD.md)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def model_dir(name: str = "small") -> Path:
    path = ROOT / name
    if not (path / "options.json").exists() or not (path / "weights.hdf5").exists():
        available = sorted(p.name for p in ROOT.iterdir() if (p / "options.json").exists())
        raise FileNotFoundError(f"no shipped biLM named {name!r} (available: {available or 'none'})")
    return path
