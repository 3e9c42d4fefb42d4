"""The biLM hyperparameters, read from and written to the original ``options.json`` (§3.4).

The file has an ``lstm`` block (``dim``, ``projection_dim``, ``n_layers``, ``cell_clip``,
``proj_clip``, ``use_skip_connections``) and a ``char_cnn`` block (``embedding.dim``,
``filters`` as ``[width, count]`` pairs, ``n_highway``, ``n_characters``,
``max_characters_per_token``, ``activation``). Every key that decides the architecture must be
present (``cell_clip``/``proj_clip`` may be null: no clipping); only ``n_characters`` has a default.
Training files may carry more keys (``dropout``, ``batch_size``, ``n_tokens_vocab``, ``softmax``
...); they are kept in ``extra`` and written back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from suite_common.errors import WeightsError


class BiLMFormatError(WeightsError):
    """A biLM options or weights file that cannot be used; the message names the file and key."""


@dataclass
class BiLMOptions:
    dim: int
    projection_dim: int
    n_layers: int
    cell_clip: float | None
    proj_clip: float | None
    use_skip_connections: bool
    char_dim: int
    filters: list[tuple[int, int]]
    n_highway: int
    activation: str = "relu"
    n_characters: int = 262
    max_characters_per_token: int = 50
    extra: dict = field(default_factory=dict)

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    def to_json_dict(self) -> dict:
        d = dict(self.extra)
        d["lstm"] = {
            **d.get("lstm", {}),
            "dim": self.dim,
            "projection_dim": self.projection_dim,
            "n_layers": self.n_layers,
            "cell_clip": self.cell_clip,
            "proj_clip": self.proj_clip,
            "use_skip_connections": self.use_skip_connections,
        }
        d["char_cnn"] = {
            **d.get("char_cnn", {}),
            "embedding": {"dim": self.char_dim},
            "filters": [list(f) for f in self.filters],
            "n_highway": self.n_highway,
            "n_characters": self.n_characters,
            "max_characters_per_token": self.max_characters_per_token,
            "activation": self.activation,
        }
        return d


def _get(block: dict, key: str, where: str, path: str):
    if key not in block:
        raise BiLMFormatError(f"{path}: missing key '{where}{key}'")
    return block[key]


def _int(block: dict, key: str, where: str, path: str, low: int, high: int) -> int:
    """An integer setting within [low, high]: a number that is whole (``50``, ``50.0``), not a string
    or a boolean, so that a typo is a message rather than a gigabyte allocation."""
    value = _get(block, key, where, path)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or int(value) != value:
        raise BiLMFormatError(f"{path}: '{where}{key}' must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise BiLMFormatError(f"{path}: '{where}{key}' must be between {low} and {high}, got {value!r}")
    return int(value)


def _clip(block: dict, key: str, path: str) -> float | None:
    value = _get(block, key, "lstm.", path)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf")
    ):
        raise BiLMFormatError(f"{path}: 'lstm.{key}' must be a positive number or null (no clipping), got {value!r}")
    return value


def parse_options(d: dict, path: str = "<options>") -> BiLMOptions:
    if not isinstance(d, dict):
        raise BiLMFormatError(f"{path}: expected a JSON object")
    lstm, cnn = _get(d, "lstm", "", path), _get(d, "char_cnn", "", path)
    if not isinstance(lstm, dict) or not isinstance(cnn, dict):
        raise BiLMFormatError(f"{path}: 'lstm' and 'char_cnn' must be JSON objects")
    raw = _get(cnn, "filters", "char_cnn.", path)
    if not isinstance(raw, list) or not raw or any(not isinstance(f, list) or len(f) != 2 for f in raw):
        raise BiLMFormatError(f"{path}: 'char_cnn.filters' must be a list of [width, count] pairs")
    filters = [
        (_int({"width": w}, "width", f"char_cnn.filters[{k}].", path, 1, 1000),
         _int({"count": n}, "count", f"char_cnn.filters[{k}].", path, 1, 65536))
        for k, (w, n) in enumerate(raw)
    ]  # fmt: skip
    activation = _get(cnn, "activation", "char_cnn.", path)
    if activation not in ("relu", "tanh"):
        raise BiLMFormatError(f"{path}: 'char_cnn.activation' must be relu or tanh, got {activation!r}")
    n_chars = int(cnn.get("n_characters", 262))
    if n_chars not in (261, 262):  # 261 in training files, 262 once the padding id is added
        raise BiLMFormatError(f"{path}: 'char_cnn.n_characters' must be 261 or 262, got {n_chars}")
    opts = BiLMOptions(
        dim=_int(lstm, "dim", "lstm.", path, 1, 65536),
        projection_dim=_int(lstm, "projection_dim", "lstm.", path, 1, 65536),
        n_layers=_int(lstm, "n_layers", "lstm.", path, 1, 64),
        cell_clip=_clip(lstm, "cell_clip", path),
        proj_clip=_clip(lstm, "proj_clip", path),
        use_skip_connections=bool(_get(lstm, "use_skip_connections", "lstm.", path)),
        char_dim=_int(_get(cnn, "embedding", "char_cnn.", path), "dim", "char_cnn.embedding.", path, 1, 4096),
        filters=filters,
        n_highway=_int(cnn, "n_highway", "char_cnn.", path, 0, 64),
        activation=activation,
        n_characters=262,
        max_characters_per_token=_int(cnn, "max_characters_per_token", "char_cnn.", path, 3, 1000),
        extra={k: v for k, v in d.items()},
    )
    if max(w for w, _ in filters) > opts.max_characters_per_token:
        raise BiLMFormatError(f"{path}: a filter is wider than max_characters_per_token")
    return opts


def read_options(path: str | Path) -> BiLMOptions:
    path = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except FileNotFoundError:
        raise BiLMFormatError(f"{path}: options file not found") from None
    except json.JSONDecodeError as e:
        raise BiLMFormatError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    return parse_options(d, path)


def write_options(opts: BiLMOptions, path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(opts.to_json_dict(), f, indent=2)
        f.write("\n")
