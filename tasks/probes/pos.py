"""POS probe (§5.3, Table 6): a linear classifier on the frozen representation of each token, one
per biLM layer, plus one on a learned ScalarMix of all layers. Data: ``token<TAB>tag`` lines, a
blank line between sentences (the PTB WSJ sample here; the paper used the full WSJ)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from elmo_core import ScalarMix

from suite_common.errors import ConfigError, DataError as DataFormatError

from ..data_files import data_files
from ..text_files import text_lines


def read_tagged(path: str | Path) -> tuple[list[list[str]], list[list[str]]]:
    sentences, tags, s, t = [], [], [], []
    for lineno, line in text_lines(path):
        line = line.rstrip("\n")
        if not line.strip():
            if s:
                sentences.append(s)
                tags.append(t)
            s, t = [], []
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0] or not cols[1]:
            raise DataFormatError(f"{path}:{lineno}: expected 'token<TAB>tag'")
        s.append(cols[0])
        t.append(cols[1])
    if s:
        sentences.append(s)
        tags.append(t)
    if not sentences:
        raise DataFormatError(f"{path}: no sentences")
    return sentences, tags


def token_matrix(cached, n_sentences: int) -> torch.Tensor:
    """All tokens' layers from a CachedLayers, (N_tokens, L+1, D), in sentence order."""
    return torch.from_numpy(np.array(cached.layers[: cached.offsets[n_sentences]], dtype=np.float32))


def train_linear(x_train, y_train, x_dev, y_dev, n_classes: int, mix: bool, epochs: int, lr: float,
                 batch_size: int, seed: int) -> tuple[float, list | None]:
    """Fit softmax regression on x (N, D) — or on a learned mix of x (N, L+1, D) — and return dev accuracy."""
    torch.manual_seed(seed)
    dim = x_train.shape[-1]
    scalar_mix = ScalarMix(x_train.shape[1]) if mix else None
    linear = nn.Linear(dim, n_classes)
    params = list(linear.parameters()) + (list(scalar_mix.parameters()) if mix else [])
    opt = torch.optim.Adam(params, lr=lr)

    def features(x):
        return scalar_mix(x.transpose(0, 1).unsqueeze(2)).squeeze(1) if mix else x

    g = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for idx in torch.randperm(len(x_train), generator=g).split(batch_size):
            loss = nn.functional.cross_entropy(linear(features(x_train[idx])), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        correct = sum(int((linear(features(x_dev[i: i + 4096])).argmax(-1) == y_dev[i: i + 4096]).sum())
                      for i in range(0, len(x_dev), 4096))
    weights = scalar_mix.weights().tolist() if mix else None
    return 100 * correct / len(y_dev), weights


def run_pos_probe(cfg, cache, out: dict) -> dict:
    if not cfg.data.get("dir"):
        raise ConfigError(f"{cfg.task.name} reads local files: set source=local or data.dir=...")
    files = data_files(cfg.data)
    train_s, train_t = read_tagged(files["train"])
    dev_s, dev_t = read_tagged(files["dev"])
    tagset = sorted({t for s in train_t for t in s})
    index = {t: i for i, t in enumerate(tagset)}
    x_train = token_matrix(cache.get(train_s, "probe_pos/train"), len(train_s))
    x_dev = token_matrix(cache.get(dev_s, "probe_pos/dev"), len(dev_s))
    y_train = torch.tensor([index[t] for s in train_t for t in s])
    y_dev = torch.tensor([index.get(t, -1) for s in dev_t for t in s])  # an unseen tag can never be right
    p = cfg.task
    per_layer = {}
    for layer in range(x_train.shape[1]):
        per_layer[str(layer)], _ = train_linear(x_train[:, layer], y_train, x_dev[:, layer], y_dev, len(tagset),
                                                False, p.epochs, p.lr, p.batch_size, cfg.seed)
    per_layer["mix"], weights = train_linear(x_train, y_train, x_dev, y_dev, len(tagset), True, p.epochs, p.lr,
                                             p.batch_size, cfg.seed)
    return {**out, "dev": {"accuracy": per_layer["mix"], "accuracy_per_layer": per_layer}, "metric": "accuracy",
            "mix_weights": weights, "data_stats": {"train_sentences": len(train_s), "train_tokens": len(y_train),
                                                   "dev_tokens": len(y_dev), "tags": len(tagset),
                                                   "dev_tokens_with_unseen_tag": int((y_dev < 0).sum())}}
