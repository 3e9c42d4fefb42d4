"""The two vector file formats the suite reads, and the one it writes (Peters et al. 2018 appendix A:
the baselines' pretrained word vectors).

* **GloVe text** (what GloVe, Senna and word2vec's text output are distributed as): one word per line,
  then its numbers, separated by single spaces; an optional first line ``<count> <dim>`` (word2vec's
  header) is skipped. A malformed line is a ``DataError`` naming the file and line.
* **The suite's HDF5** (``.hdf5``/``.h5``, how the shipped vectors are stored): a ``words`` dataset (the
  words as one gzip-compressed UTF-8 text, one a line, most frequent first) and a ``vectors`` dataset
  (words x dim, float16 to keep the checkout small), with ``dim`` and ``count`` attributes checked on reading.

``rows_for`` gives the rows of a task's vocabulary: the word's vector where the file has the word
(matched exactly: case counts), ``None`` otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from suite_common.atomic_files import write_atomic
from suite_common.errors import DataError

HDF5_SUFFIXES = (".hdf5", ".h5")


def is_hdf5(path: str | Path) -> bool:
    return Path(path).suffix.lower() in HDF5_SUFFIXES


def write_hdf5(path: str | Path, words: list[str], vectors: np.ndarray, **attributes) -> None:
    """Store ``vectors`` (one row per word) as float16, complete or not at all."""
    import h5py

    if len(words) != len(vectors) or len(set(words)) != len(words):
        raise DataError(f"{path}: {len(words)} words (distinct: {len(set(words))}) for {len(vectors)} rows")

    if any("\n" in w for w in words):
        raise DataError(f"{path}: a word holds a line break")
    text = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)

    def write(tmp: Path) -> None:
        with h5py.File(tmp, "w", track_order=True) as f:
            # the words as one UTF-8 text, one a line, compressed (a string per word would take a tenth of the file)
            f.create_dataset("words", data=text, compression="gzip", compression_opts=9, shuffle=False)
            f.create_dataset("vectors", data=np.asarray(vectors, dtype=np.float16))
            f.attrs["dim"] = vectors.shape[1]
            f.attrs["count"] = len(words)
            for key, value in attributes.items():
                f.attrs[key] = value

    write_atomic(path, write)


def read_hdf5(path: str | Path) -> tuple[list[str], np.ndarray]:
    """The words and their float32 vectors of a file written by ``write_hdf5``."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            missing = [k for k in ("words", "vectors") if k not in f]
            if missing:
                raise DataError(f"{path}: not a vectors file (no {', '.join(missing)} dataset)")
            stored = f["words"][()]
            if stored.dtype == np.uint8:  # one UTF-8 text, a word a line
                words = bytes(stored).decode("utf-8").split("\n") if stored.size else []
            else:  # a string per word
                words = [w.decode("utf-8") if isinstance(w, bytes) else w for w in stored]
            vectors = f["vectors"][()].astype(np.float32)
            dim, count = int(f.attrs.get("dim", -1)), int(f.attrs.get("count", -1))
    except OSError as e:
        raise DataError(f"{path}: not a readable HDF5 vectors file ({e})") from None
    if vectors.ndim != 2 or vectors.shape != (count, dim) or len(words) != count:
        raise DataError(
            f"{path}: {len(words)} words and vectors of shape {vectors.shape}, attributes say {count} x {dim}"
        )
    if not np.isfinite(vectors).all():
        raise DataError(f"{path}: vectors hold values that are not finite numbers")
    return words, vectors


def text_rows(path: str | Path) -> Iterator[tuple[int, str, np.ndarray]]:
    """(line number, word, vector) for each line of a GloVe text file; every row must have the first
    row's width, and every value must be a number."""
    dim = None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").rstrip(" ").split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec's header: <count> <dim>
            if dim is None:
                dim = len(parts) - 1
                if dim < 1:
                    raise DataError(f"{path}:{lineno}: expected a word and its numbers, got {line.strip()!r}")
            if len(parts) != dim + 1:
                raise DataError(f"{path}:{lineno}: expected {dim} values, got {len(parts) - 1}")
            try:
                vector = np.array(parts[1:], dtype=np.float32)
            except ValueError:
                bad = next(p for p in parts[1:] if not _is_number(p))
                raise DataError(f"{path}:{lineno}: {bad!r} is not a number (word {parts[0]!r})") from None
            if not np.isfinite(vector).all():
                raise DataError(f"{path}:{lineno}: a value that is not a finite number (word {parts[0]!r})")
            yield lineno, parts[0], vector


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def rows_for(path: str | Path, words: list[str]) -> tuple[list[np.ndarray | None], int]:
    """For each of ``words``, its vector from ``path`` (either format) or ``None``; and the width."""
    index = {w: i for i, w in enumerate(words)}
    rows: list[np.ndarray | None] = [None] * len(words)
    dim = None
    if is_hdf5(path):
        file_words, vectors = read_hdf5(path)
        dim = vectors.shape[1]
        for word, vector in zip(file_words, vectors):
            i = index.get(word)
            if i is not None:
                rows[i] = vector
    else:
        for _, word, vector in text_rows(path):
            dim = len(vector)
            i = index.get(word)
            if i is not None and rows[i] is None:  # the first line of a word counts, as in GloVe's readers
                rows[i] = vector
    if dim is None:
        raise DataError(f"{path}: empty vectors file")
    return rows, dim
