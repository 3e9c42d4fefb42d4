"""Read and write biLM weights in the original ``weights.hdf5`` layout (bilm-tf, §3.4 models).

Datasets (TensorFlow orientation, ``x @ W``)::

    char_embed                                   (261, char_dim)   no row for the padding id 0
    CNN/W_cnn_{i}, CNN/b_cnn_{i}                 (1, width, char_dim, count), (count,)
    CNN_high_{i}/{W,b}_{carry,transform}         (F, F), (F,)      carry = the sigmoid gate
    CNN_proj/{W,b}_proj                          (F, P), (P,)      absent when F == P
    RNN_{d}/RNN/MultiRNNCell/Cell{j}/LSTMCell/W_0  (P + P, 4*dim)  kernel on [x; h], gates i,j,f,o
                                            /B     (4*dim,)        forget bias +1 is NOT stored
                                            /W_P_0 (dim, P)        projection
    (d = 0 forward, 1 backward; j = layer)

Loading checks every key and shape against the options before touching the model, so a bad
file never leaves a half-loaded biLM. Saving writes a temporary file and renames it.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np
import torch

from suite_common.atomic_files import write_atomic
from suite_common.hashing import file_sha256 as sha256_of_file

from .bilm import BiLM
from .options import BiLMFormatError, BiLMOptions, read_options, write_options


def lstm_prefix(direction: int, layer: int) -> str:
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"


def expected_shapes(opts: BiLMOptions) -> dict[str, tuple[int, ...]]:
    """Every dataset of a weights file for these options, with its shape."""
    F, P, D = opts.n_filters, opts.projection_dim, opts.dim
    shapes: dict[str, tuple[int, ...]] = {"char_embed": (261, opts.char_dim)}
    for i, (width, count) in enumerate(opts.filters):
        shapes[f"CNN/W_cnn_{i}"] = (1, width, opts.char_dim, count)
        shapes[f"CNN/b_cnn_{i}"] = (count,)
    for i in range(opts.n_highway):
        for part in ("carry", "transform"):
            shapes[f"CNN_high_{i}/W_{part}"] = (F, F)
            shapes[f"CNN_high_{i}/b_{part}"] = (F,)
    if F != P:
        shapes["CNN_proj/W_proj"], shapes["CNN_proj/b_proj"] = (F, P), (P,)
    for d in range(2):
        for j in range(opts.n_layers):
            p = lstm_prefix(d, j)
            shapes[f"{p}/W_0"], shapes[f"{p}/B"], shapes[f"{p}/W_P_0"] = (2 * P, 4 * D), (4 * D,), (D, P)
    return shapes


def declared_extras(opts: BiLMOptions) -> tuple[str, ...]:
    """Dataset prefixes a weights file may hold beyond the biLM because its options declare them:
    the training softmax of models exported by ``elmo_core.pretrain`` (options key ``softmax``)."""
    return ("softmax/",) if "softmax" in opts.extra else ()


def unused_datasets(f: h5py.File, opts: BiLMOptions) -> list[str]:
    expected, extras = set(expected_shapes(opts)), declared_extras(opts)
    found: list[str] = []
    f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) else None)
    return sorted(k for k in found if k not in expected and not k.startswith(extras))


def read_weight_arrays(path: str | Path, opts: BiLMOptions, allow_extra: bool = False) -> dict[str, np.ndarray]:
    """All datasets, validated (present, right shape, finite, readable). A dataset the options do not
    use (another layer count or highway count than the file's, say) is an error unless
    ``allow_extra``: loading it silently would give another model than the file holds."""
    path = str(path)
    if not os.path.exists(path):
        raise BiLMFormatError(f"{path}: weights file not found")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise BiLMFormatError(f"{path}: not a readable HDF5 file (truncated or corrupt?): {e}") from None
    arrays = {}
    with f:
        unused = unused_datasets(f, opts)
        if unused and not allow_extra:
            shown = ", ".join(f"'{k}'" for k in unused[:4]) + (
                f" and {len(unused) - 4} more" if len(unused) > 4 else ""
            )
            raise BiLMFormatError(
                f"{path}: {len(unused)} dataset(s) the options do not use: {shown} (do the options "
                "match these weights? allow_extra=True / encoder.allow_extra_weights=true / "
                "--allow-extra-weights ignores them)"
            )
        for key, shape in expected_shapes(opts).items():
            if key not in f:
                raise BiLMFormatError(f"{path}: missing key '{key}'")
            ds = f[key]
            if not isinstance(ds, h5py.Dataset):
                raise BiLMFormatError(f"{path}: key '{key}' is a group, expected a dataset")
            if tuple(ds.shape) != shape:
                raise BiLMFormatError(f"{path}: key '{key}' has shape {tuple(ds.shape)}, the options require {shape}")
            try:
                value = np.asarray(ds[...], dtype=np.float32)
            except (OSError, RuntimeError, ValueError) as e:
                raise BiLMFormatError(f"{path}: key '{key}' cannot be read (corrupt file?): {e}") from None
            if not np.isfinite(value).all():
                raise BiLMFormatError(f"{path}: key '{key}' contains NaN or infinite values")
            arrays[key] = value
    return arrays


def bilm_state_dict(arrays: dict[str, np.ndarray], opts: BiLMOptions) -> dict[str, torch.Tensor]:
    """Original arrays -> the ``BiLM`` module's state dict."""
    t = torch.from_numpy
    sd = {}
    embed = np.zeros((arrays["char_embed"].shape[0] + 1, opts.char_dim), dtype=np.float32)
    embed[1:] = arrays["char_embed"]
    sd["token_encoder.char_embed.weight"] = t(embed)
    for i in range(len(opts.filters)):
        sd[f"token_encoder.convs.{i}.weight"] = t(arrays[f"CNN/W_cnn_{i}"][0].transpose(2, 1, 0).copy())
        sd[f"token_encoder.convs.{i}.bias"] = t(arrays[f"CNN/b_cnn_{i}"])
    for i in range(opts.n_highway):
        for part, name in (("carry", "highway_gate"), ("transform", "highway_transform")):
            sd[f"token_encoder.{name}.{i}.weight"] = t(arrays[f"CNN_high_{i}/W_{part}"].T.copy())
            sd[f"token_encoder.{name}.{i}.bias"] = t(arrays[f"CNN_high_{i}/b_{part}"])
    if opts.n_filters != opts.projection_dim:
        sd["token_encoder.projection.weight"] = t(arrays["CNN_proj/W_proj"].T.copy())
        sd["token_encoder.projection.bias"] = t(arrays["CNN_proj/b_proj"])
    P = opts.projection_dim
    for d, name in enumerate(("forward_layers", "backward_layers")):
        for j in range(opts.n_layers):
            p = lstm_prefix(d, j)
            sd[f"{name}.{j}.w_x"] = t(arrays[f"{p}/W_0"][:P].copy())
            sd[f"{name}.{j}.w_h"] = t(arrays[f"{p}/W_0"][P:].copy())
            sd[f"{name}.{j}.bias"] = t(arrays[f"{p}/B"])
            sd[f"{name}.{j}.w_p"] = t(arrays[f"{p}/W_P_0"])
    return sd


def original_arrays(bilm: BiLM) -> dict[str, np.ndarray]:
    """The ``BiLM`` module's weights in the original layout (inverse of ``bilm_state_dict``)."""
    opts = bilm.opts
    sd = {k: v.detach().cpu().float().numpy() for k, v in bilm.state_dict().items()}
    arrays = {"char_embed": sd["token_encoder.char_embed.weight"][1:]}
    for i in range(len(opts.filters)):
        arrays[f"CNN/W_cnn_{i}"] = sd[f"token_encoder.convs.{i}.weight"].transpose(2, 1, 0)[None]
        arrays[f"CNN/b_cnn_{i}"] = sd[f"token_encoder.convs.{i}.bias"]
    for i in range(opts.n_highway):
        for part, name in (("carry", "highway_gate"), ("transform", "highway_transform")):
            arrays[f"CNN_high_{i}/W_{part}"] = sd[f"token_encoder.{name}.{i}.weight"].T
            arrays[f"CNN_high_{i}/b_{part}"] = sd[f"token_encoder.{name}.{i}.bias"]
    if opts.n_filters != opts.projection_dim:
        arrays["CNN_proj/W_proj"] = sd["token_encoder.projection.weight"].T
        arrays["CNN_proj/b_proj"] = sd["token_encoder.projection.bias"]
    for d, name in enumerate(("forward_layers", "backward_layers")):
        for j in range(opts.n_layers):
            p = lstm_prefix(d, j)
            arrays[f"{p}/W_0"] = np.concatenate([sd[f"{name}.{j}.w_x"], sd[f"{name}.{j}.w_h"]], axis=0)
            arrays[f"{p}/B"] = sd[f"{name}.{j}.bias"]
            arrays[f"{p}/W_P_0"] = sd[f"{name}.{j}.w_p"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}


def write_hdf5_atomic(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    def write(tmp: Path) -> None:
        with h5py.File(tmp, "w") as f:
            for key, value in arrays.items():
                f.create_dataset(key, data=value)

    write_atomic(path, write)


def load_bilm(
    options_file: str | Path,
    weight_file: str | Path,
    stateful: bool = False,
    device: str | torch.device = "cpu",
    requires_grad: bool = False,
    allow_extra: bool = False,
) -> BiLM:
    """A ``BiLM`` with the weights of an original-format model (frozen unless ``requires_grad``);
    datasets the options do not use are an error unless ``allow_extra``."""
    opts = read_options(options_file)
    arrays = read_weight_arrays(weight_file, opts, allow_extra)
    bilm = BiLM(opts, stateful=stateful)
    bilm.load_state_dict(bilm_state_dict(arrays, opts), strict=True)
    bilm.to(device).eval()
    for p in bilm.parameters():
        p.requires_grad_(requires_grad)
    return bilm


def save_bilm(
    bilm: BiLM, options_file: str | Path, weight_file: str | Path, extra_arrays: dict[str, np.ndarray] | None = None
) -> None:
    """Write ``options.json`` + ``weights.hdf5`` in the original layout (atomically).

    ``extra_arrays`` (e.g. the training softmax) are stored under their own keys, which readers of
    the original format ignore.
    """
    write_hdf5_atomic(weight_file, {**original_arrays(bilm), **(extra_arrays or {})})
    write_atomic(options_file, lambda tmp: write_options(bilm.opts, tmp))


def file_sha256(path: str | Path) -> str:
    """Content hash of a weights file: the biLM's identity in caches and results."""
    return sha256_of_file(path)
