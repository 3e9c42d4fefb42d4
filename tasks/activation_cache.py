"""Cache of the frozen biLM's layer activations (Peters et al. 2018 §3.3: the biLM is frozen, so
h_{k,j} for a dataset never changes and every run and epoch can share one biLM pass).

A cache entry is a directory ``<root>/<key>/`` holding ``layers.npy`` (all tokens of all sentences,
``(n_tokens, L+1, 2*projection_dim)``, memory-mapped when read), ``offsets.npy`` (sentence starts)
and ``meta.json`` (what it was built from, shapes, and the SHA-256 of both arrays). The key is a
hash of the biLM's weights and options files, the tokenized text, the state policy (stateless;
stateful with states carried across batches in file order, as the original; stateful after a
warm-up of the data's first batches) and the dtype.
Entries are built in a temporary directory and renamed into place only when complete; on open the
sizes and checksums are verified, and a bad entry is deleted and rebuilt, never read.

This module also owns the one interface through which contextual layers reach a task:
``LayerSource.batch(rows) -> (layers (L+1, B, T, D) float32, mask (B, T))`` for rows of the
dataset's sentence list. ``CachedLayers`` reads a cache entry; ``LiveLayers`` runs the biLM per
batch (``elmo.cache=false``). A task's batch carries what its source returns (``tasks.base``).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from elmo_core import batch_to_ids, file_sha256, load_bilm
from elmo_core.embed import embed_sentences
from elmo_core.errors import ConfigError, DataError
from elmo_core.atomic_files import remove_dead_leftovers, temporary_path

FORMAT = "elmo-suite/activations/1"
STATE_POLICIES = ("stateless", "stateful", "stateful_warmup")


class LayerSource(Protocol):
    """Contextual layers of one dataset's sentences (``Task.sentences``), by row."""

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """Layers (L+1, B, T, D) float32 and mask (B, T) of the given sentences."""
        ...


class LiveLayers:
    """Runs the biLM per batch (``elmo.cache=false``)."""

    def __init__(self, bilm, sentences: list[list[str]]):
        self.bilm, self.sentences = bilm, sentences

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            out = self.bilm(batch_to_ids([self.sentences[i] for i in indices]).to(self.bilm.bos_ids.device))
        return out.layers.clone().cpu(), out.mask.clone().cpu()


class CachedLayers:
    """Read access to one dataset's activations in the cache."""

    def __init__(self, directory: Path, meta: dict):
        self.directory, self.meta = directory, meta
        self.layers = np.load(directory / "layers.npy", mmap_mode="r")
        self.offsets = np.load(directory / "offsets.npy")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_layers(self) -> int:
        return self.layers.shape[1]

    def sentence(self, i: int) -> np.ndarray:
        """(L+1, T_i, D) for sentence i."""
        return np.asarray(self.layers[self.offsets[i]: self.offsets[i + 1]]).transpose(1, 0, 2)

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """Layers (L+1, B, T, D) float32 and mask (B, T) for the given sentences."""
        lengths = [int(self.offsets[i + 1] - self.offsets[i]) for i in indices]
        T = max(lengths) if lengths else 0
        out = np.zeros((self.layers.shape[1], len(indices), T, self.layers.shape[2]), np.float32)
        for row, i in enumerate(indices):
            out[:, row, : lengths[row]] = self.sentence(i)
        mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
        return torch.from_numpy(out), mask


class ActivationCache:
    bilm_passes = 0  # sentences-batches run through a biLM by this process (tests count these)

    def __init__(self, root: str | Path, options_file: str | Path, weight_file: str | Path,
                 state: str = "stateless", batch_size: int = 64, dtype: str = "float32", device: str = "cpu",
                 warmup_batches: int = 0, allow_extra: bool = False):
        if dtype not in ("float32", "float16"):
            raise ConfigError(f"elmo.cache_dtype must be float32 or float16, got {dtype!r}")
        if state not in STATE_POLICIES:
            raise ConfigError(f"elmo.state must be one of {STATE_POLICIES}, got {state!r}")
        self.root = Path(root)
        self.options_file, self.weight_file = Path(options_file), Path(weight_file)
        self.state, self.batch_size, self.dtype, self.device = state, batch_size, dtype, device
        self.warmup_batches = warmup_batches if state == "stateful_warmup" else 0
        self.bilm_sha256 = file_sha256(self.weight_file)
        self.options_sha256 = file_sha256(self.options_file)
        self.allow_extra = allow_extra
        self._bilm = None

    def key(self, sentences: list[list[str]]) -> str:
        text = hashlib.sha256("\n".join(" ".join(s) for s in sentences).encode("utf-8")).hexdigest()
        # stateful activations depend on the batch layout (and the warm-up); stateless ones do not
        state = "stateless" if self.state == "stateless" else f"{self.state}-b{self.batch_size}-w{self.warmup_batches}"
        ident = json.dumps([FORMAT, self.bilm_sha256, self.options_sha256, text, state, self.dtype])
        return hashlib.sha256(ident.encode()).hexdigest()[:32]

    def get(self, sentences: list[list[str]], name: str = "data") -> CachedLayers:
        directory = self.root / self.key(sentences)
        if directory.exists():
            problem = self._verify(directory, len(sentences))
            if problem is None:
                return CachedLayers(directory, json.loads((directory / "meta.json").read_text()))
            print(f"activation cache {directory} is unusable ({problem}); rebuilding", file=sys.stderr)
            shutil.rmtree(directory)
        self._build(sentences, directory, name)
        return CachedLayers(directory, json.loads((directory / "meta.json").read_text()))

    @staticmethod
    def _verify(directory: Path, n_sentences: int) -> str | None:
        try:
            meta = json.loads((directory / "meta.json").read_text())
            if meta.get("format") != FORMAT or meta.get("sentences") != n_sentences:
                return "written for other data or by another version"
            for name in ("layers", "offsets"):
                path = directory / f"{name}.npy"
                if path.stat().st_size != meta[f"{name}_bytes"]:
                    return f"{path.name} has the wrong size (truncated?)"
                if file_sha256(path) != meta[f"{name}_sha256"]:
                    return f"{path.name} fails its checksum"
        except (OSError, ValueError, KeyError) as e:
            return f"{type(e).__name__}: {e}"
        return None

    def _build(self, sentences: list[list[str]], directory: Path, name: str) -> None:
        if self._bilm is None:
            self._bilm = load_bilm(self.options_file, self.weight_file, stateful=self.state != "stateless",
                                   device=self.device, allow_extra=self.allow_extra)
        bilm = self._bilm
        bilm.reset_state()
        for start in range(0, min(self.warmup_batches * self.batch_size, len(sentences)), self.batch_size):
            with torch.inference_mode():  # warm-up: run the data's first batches, keep only the states
                bilm(batch_to_ids(sentences[start: start + self.batch_size]).to(bilm.bos_ids.device))
            ActivationCache.bilm_passes += 1
        if any(len(s) == 0 for s in sentences):
            raise DataError(f"{name}: empty sentence at index {next(i for i, s in enumerate(sentences) if not s)}")
        L1, D = bilm.opts.n_layers + 1, 2 * bilm.opts.projection_dim
        lengths = np.array([len(s) for s in sentences])
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.root.mkdir(parents=True, exist_ok=True)
        remove_dead_leftovers(self.root)
        tmp = temporary_path(directory)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            layers = np.lib.format.open_memmap(tmp / "layers.npy", mode="w+", dtype=self.dtype,
                                               shape=(int(offsets[-1]), L1, D))
            print(f"biLM pass over {name}: {len(sentences)} sentences, {offsets[-1]} tokens", file=sys.stderr)
            for i, sent_layers in embed_sentences(bilm, sentences, self.batch_size, progress=True):
                layers[offsets[i]: offsets[i + 1]] = sent_layers.transpose(1, 0, 2)
            ActivationCache.bilm_passes += -(-len(sentences) // self.batch_size)
            layers.flush()
            del layers
            np.save(tmp / "offsets.npy", offsets)
            meta = {"format": FORMAT, "name": name, "sentences": len(sentences), "tokens": int(offsets[-1]),
                    "shape": [int(offsets[-1]), L1, D], "dtype": self.dtype, "state": self.state,
                    "warmup_batches": self.warmup_batches,
                    "bilm_sha256": self.bilm_sha256, "options_sha256": self.options_sha256}
            for part in ("layers", "offsets"):
                meta[f"{part}_bytes"] = (tmp / f"{part}.npy").stat().st_size
                meta[f"{part}_sha256"] = file_sha256(tmp / f"{part}.npy")
            (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
            os.replace(tmp, directory)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
