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


def parse_options(d: dict, path: str = "<options>") -> BiLMOptions:
    if not isinstance(d, dict):
        raise BiLMFormatError(f"{path}: expected a JSON object")
    lstm, cnn = _get(d, "lstm", "", path), _get(d, "char_cnn", "", path)
    filters = [tuple(int(v) for v in f) for f in _get(cnn, "filters", "char_cnn.", path)]
    if not filters or any(len(f) != 2 or min(f) <= 0 for f in filters):
        raise BiLMFormatError(f"{path}: 'char_cnn.filters' must be a list of [width, count] pairs")
    activation = _get(cnn, "activation", "char_cnn.", path)
    if activation not in ("relu", "tanh"):
        raise BiLMFormatError(f"{path}: 'char_cnn.activation' must be relu or tanh, got {activation!r}")
    n_chars = int(cnn.get("n_characters", 262))
    if n_chars not in (261, 262):  # 261 in training files, 262 once the padding id is added
        raise BiLMFormatError(f"{path}: 'char_cnn.n_characters' must be 261 or 262, got {n_chars}")
    opts = BiLMOptions(
        dim=int(_get(lstm, "dim", "lstm.", path)),
        projection_dim=int(_get(lstm, "projection_dim", "lstm.", path)),
        n_layers=int(_get(lstm, "n_layers", "lstm.", path)),
        cell_clip=_get(lstm, "cell_clip", "lstm.", path),
        proj_clip=_get(lstm, "proj_clip", "lstm.", path),
        use_skip_connections=bool(_get(lstm, "use_skip_connections", "lstm.", path)),
        char_dim=int(_get(_get(cnn, "embedding", "char_cnn.", path), "dim", "char_cnn.embedding.", path)),
        filters=filters,
        n_highway=int(_get(cnn, "n_highway", "char_cnn.", path)),
        activation=activation,
        n_characters=262,
        max_characters_per_token=int(_get(cnn, "max_characters_per_token", "char_cnn.", path)),
        extra={k: v for k, v in d.items()},
    )
    if opts.max_characters_per_token < 3:
        raise BiLMFormatError(f"{path}: 'char_cnn.max_characters_per_token' must be at least 3")
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
