"""Cache of a frozen encoder's layer activations (Peters et al. 2018 §3.3: the biLM is frozen, so
h_{k,j} for a dataset never changes and every run and epoch can share one pass; the same holds for
any frozen Transformer used the same way).

A cache entry is a directory ``<root>/<key>/`` holding ``layers.npy`` (all tokens of all sentences,
``(n_tokens, L+1, D)``, memory-mapped when read), ``offsets.npy`` (sentence starts) and
``meta.json`` (what it was built from, shapes, and the SHA-256 of both arrays). The key is a hash of
what the encoder's activations depend on (``Encoder.cache_identity``: for the biLM its weights and
options files and the state policy; for a Transformer its files, the word pooling and the window
length, and the batch size, which changes the last bits), the tokenized text and the dtype. Entries
are built in a temporary directory whose blocks are claimed first (a full disk is one error line,
not a crash) and renamed into place only when complete; processes that share a cache build each
entry once (a lock per entry: the second waits and reads the first one's); on open the sizes and
checksums are verified, and a bad entry is deleted and rebuilt, never read.

This module also owns the one interface through which contextual layers reach a task:
``LayerSource.batch(rows) -> (layers (L+1, B, T, D) float32, mask (B, T))`` for rows of the
dataset's sentence list. ``CachedLayers`` reads a cache entry; an encoder's ``live`` source runs it
per batch (``cache.enabled=false``). A task's batch carries what its source returns (``tasks.base``);
the cache, the runner and the task models never know which encoder produced the layers.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from elmo_core import file_sha256
from suite_common.atomic_files import remove_dead_leftovers, rename_into_place, temporary_path
from suite_common.errors import ConfigError, DataError, storage_error
from suite_common.hashing import sha256_hex
from suite_common.locks import acquire

FORMAT = "elmo-suite/activations/2"  # 2: keyed by the encoder's cache_identity
NPY_HEADER_BYTES = 128  # numpy's .npy header for these arrays (format 1.0, padded to 64 bytes)


def size_text(n_bytes: float) -> str:
    """Bytes as GB, MB or kB with three significant digits."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{int(n_bytes)} bytes"


class CacheBudgetError(ConfigError):
    """A cache that would not fit the disk or ``cache.max_gb``: raised before anything is written."""


class LayerSource(Protocol):
    """Contextual layers of one dataset's sentences (``Task.sentences``), by row."""

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """Layers (L+1, B, T, D) float32 and mask (B, T) of the given sentences."""
        ...


class EmbeddedLayers:
    """Any encoder's ``embed`` per batch (``cache.enabled=false``), padded into the batch layout."""

    def __init__(self, encoder, sentences: list[list[str]]):
        self.encoder, self.sentences = encoder, sentences

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        per_sentence = [layers for _, layers in self.encoder.embed([self.sentences[i] for i in indices], None)]
        return pad_layers(per_sentence, *self.encoder.layer_shape())


def pad_layers(per_sentence: list[np.ndarray], num_layers: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sentences' ``(L+1, T_i, D)`` layers -> ``(L+1, B, T, D)`` zero-padded and the ``(B, T)`` mask."""
    lengths = [x.shape[1] for x in per_sentence]
    T = max(lengths) if lengths else 0
    out = np.zeros((num_layers, len(per_sentence), T, dim), np.float32)
    for row, x in enumerate(per_sentence):
        out[:, row, : lengths[row]] = x
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths, dtype=torch.long).unsqueeze(1)
    return torch.from_numpy(out), mask


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
        return np.asarray(self.layers[self.offsets[i] : self.offsets[i + 1]]).transpose(1, 0, 2)

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """Layers (L+1, B, T, D) float32 and mask (B, T) for the given sentences."""
        return pad_layers([self.sentence(i) for i in indices], self.layers.shape[1], self.layers.shape[2])


class ActivationCache:
    encoder_passes = 0  # sentence batches run through an encoder by this process (tests count these)

    def __init__(self, root: str | Path, encoder, dtype: str = "float32"):
        """``encoder``: an ``encoders.Encoder`` (its ``cache_identity``, ``layer_shape``, ``meta`` and ``embed``)."""
        if dtype not in ("float32", "float16"):
            raise ConfigError(f"cache.dtype must be float32 or float16, got {dtype!r}")
        self.root, self.encoder, self.dtype = Path(root), encoder, dtype

    def key(self, sentences: list[list[str]]) -> str:
        text = sha256_hex("\n".join(" ".join(s) for s in sentences))
        ident = json.dumps([FORMAT, *self.encoder.cache_identity(), text, self.dtype])
        return sha256_hex(ident)[:32]

    def planned_bytes(self, sentences: list[list[str]]) -> int:
        """The bytes an entry for ``sentences`` takes on disk: every token's (L+1, D) layers in the
        cache's dtype, the sentence offsets and their two .npy headers (meta.json aside)."""
        L1, D = self.encoder.layer_shape()
        tokens = sum(len(s) for s in sentences)
        return 2 * NPY_HEADER_BYTES + tokens * L1 * D * np.dtype(self.dtype).itemsize + 8 * (len(sentences) + 1)

    def has(self, sentences: list[list[str]]) -> bool:
        """Whether an entry for ``sentences`` is on disk (verified only when opened)."""
        return (self.root / self.key(sentences) / "meta.json").is_file()

    def check_budget(self, named: dict[str, list[list[str]]], max_gb: float | None) -> int:
        """Stop before writing anything when the entries still missing for ``named`` (split name ->
        sentences) would exceed ``max_gb`` (``cache.max_gb``; None: no limit) or the free disk
        space under the cache root; returns the bytes the missing entries will take."""
        missing, keys = {}, set()
        for name, s in named.items():  # two splits with the same text share one entry
            if not self.has(s) and self.key(s) not in keys:
                missing[name] = s
                keys.add(self.key(s))
        need = sum(self.planned_bytes(s) for s in missing.values())
        if not need:
            return 0
        remove_dead_leftovers(self.root)  # a dead build's temporary is not used space
        existing = self.root
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        free = shutil.disk_usage(existing).free
        limit = None
        if max_gb is not None and need > max_gb * 1e9:
            limit = f"cache.max_gb={max_gb:g}"
        elif need > free:
            limit = f"the {size_text(free)} free under {existing}"
        if limit:
            L1, D = self.encoder.layer_shape()
            tokens = sum(len(sentence) for s in missing.values() for sentence in s)
            raise CacheBudgetError(
                f"the activation cache for {', '.join(missing)} would take {size_text(need)} ({tokens:,} tokens x "
                f"{L1} layers x {D} x {np.dtype(self.dtype).itemsize} bytes), more than {limit}; nothing was written. "
                f"Run the encoder on each batch instead with cache.enabled=false"
                + (" (or halve the cache with cache.dtype=float16)" if self.dtype == "float32" else "")
            )
        return need

    def get(self, sentences: list[list[str]], name: str = "data") -> CachedLayers:
        """The entry for ``sentences``, built if missing or bad. Processes sharing the cache take a lock
        per entry (``.locks/<key>``), so the second one waits for the first one's entry and reads it."""
        directory = self.root / self.key(sentences)
        try:
            lock = acquire(self.root / ".locks" / directory.name)  # released also when the process dies
        except OSError as e:
            if directory.exists() and self._verify(directory, len(sentences)) is None:  # a read-only, complete cache
                return CachedLayers(directory, json.loads((directory / "meta.json").read_text()))
            raise storage_error(self.root, e) from None
        with lock:
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
        if any(len(s) == 0 for s in sentences):
            raise DataError(f"{name}: empty sentence at index {next(i for i, s in enumerate(sentences) if not s)}")
        L1, D = self.encoder.layer_shape()
        lengths = np.array([len(s) for s in sentences])
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        remove_dead_leftovers(self.root)
        tmp = temporary_path(directory)
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir()
            layers = np.lib.format.open_memmap(
                tmp / "layers.npy", mode="w+", dtype=self.dtype, shape=(int(offsets[-1]), L1, D)
            )
            with open(tmp / "layers.npy", "r+b") as f:  # claim the blocks now: a full disk is an error here,
                os.posix_fallocate(f.fileno(), 0, os.fstat(f.fileno()).st_size)  # not a SIGBUS in the mmap
            for i, sent_layers in self.encoder.embed(sentences, name):
                layers[offsets[i] : offsets[i + 1]] = sent_layers.transpose(1, 0, 2)
            layers.flush()
            del layers
            np.save(tmp / "offsets.npy", offsets)
            meta = {
                "format": FORMAT,
                "name": name,
                "sentences": len(sentences),
                "tokens": int(offsets[-1]),
                "shape": [int(offsets[-1]), L1, D],
                "dtype": self.dtype,
                **self.encoder.meta(),
            }
            for part in ("layers", "offsets"):
                meta[f"{part}_bytes"] = (tmp / f"{part}.npy").stat().st_size
                meta[f"{part}_sha256"] = file_sha256(tmp / f"{part}.npy")
            (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
            rename_into_place(tmp, directory)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST) and directory.exists():
                return  # another host's process (no shared lock there) put the same entry in place first
            raise storage_error(directory, e) from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
