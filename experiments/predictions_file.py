"""A run's predictions kept beside its record, so that every number in a table can be checked
(Peters et al. 2018 §4 report dev/test metrics; here each metric is recomputed from what the model
predicted): ``<split>_predictions.json.gz`` holds, per example of the split in file order, what the
task's metric needs and nothing more (label ids for SST-5 and entailment, tag sequences for NER and
SRL, token spans for SQuAD, clusters of token spans for coreference), compressed.

Strings (tags) are stored as ids into the file's own ``vocabulary``; everything else as the task
predicted it. The record names the file with its SHA-256 (``Record.predictions``), and reading checks
both the hash and the shape, so an edited or truncated file is never scored.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from suite_common.atomic_files import write_bytes_atomic
from suite_common.bounded_files import MB, gunzip_bounded, read_bounded, regular_file_size
from suite_common.errors import DataError
from suite_common.hashing import sha256_hex

FORMAT = 1


def _encode(predictions: list, vocabulary: dict[str, int]):
    """Sequences of strings as sequences of ids (``vocabulary`` grows); other values unchanged."""
    out = []
    for p in predictions:
        if isinstance(p, (list, tuple)) and p and all(isinstance(t, str) for t in p):
            out.append([vocabulary.setdefault(t, len(vocabulary)) for t in p])
        elif isinstance(p, tuple):
            out.append(list(p))
        else:
            out.append(p)
    return out


def write_predictions_file(path: Path, task: str, split: str, predictions: list) -> dict:
    """Write ``predictions`` (one per example of ``split``) to ``path``; returns the record's entry:
    the file's name (beside the record), SHA-256, size and example count."""
    vocabulary: dict[str, int] = {}
    encoded = _encode(predictions, vocabulary)
    body = {
        "format": FORMAT,
        "task": task,
        "split": split,
        "examples": len(predictions),
        "vocabulary": sorted(vocabulary, key=vocabulary.get) or None,
        "predictions": encoded,
    }
    data = gzip.compress(json.dumps(body, separators=(",", ":")).encode(), compresslevel=9, mtime=0)
    write_bytes_atomic(Path(path), data)
    return {
        "file": Path(path).name,
        "sha256": sha256_hex(data),
        "bytes": len(data),
        "examples": len(predictions),
    }


MAX_FILE_BYTES = 64 * MB  # compressed; the largest kept so far (SQuAD's paper-profile dev) is under 1 MB
MAX_JSON_BYTES = 512 * MB  # decompressed
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")


def entry_path(run_dir: Path, entry: object) -> Path:
    """Where a record's predictions ``entry`` is: a plain file name inside the record's own directory
    (no separator, no ``..``, not a link), checked before anything is read or copied."""
    name = entry.get("file") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name) or ".." in name:
        raise DataError(f"{run_dir}: a predictions entry names {name!r}, not a file name inside the run directory")
    path = Path(run_dir) / name
    regular_file_size(path, "predictions file")
    return path


def _checked_bytes(path: Path, entry: dict) -> bytes:
    data = read_bounded(path, MAX_FILE_BYTES, "predictions file")
    if sha256_hex(data) != entry.get("sha256"):
        raise DataError(f"{path}: predictions file differs from the SHA-256 its record names")
    return data


def read_predictions_file(path: Path, entry: dict) -> list:
    """The predictions a record's ``entry`` names, decoded (tag ids back to strings); ``DataError``
    when the file is missing, not a regular file, too large (compressed or not), differs from its
    SHA-256, or does not hold ``entry['examples']``."""
    path = Path(path)
    data = _checked_bytes(path, entry)
    text = gunzip_bounded(data, MAX_JSON_BYTES, path, "predictions file")
    try:
        body = json.loads(text)
    except ValueError as e:
        raise DataError(f"{path}: not a predictions file ({type(e).__name__})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT or not isinstance(body.get("predictions"), list):
        raise DataError(f"{path}: not a predictions file of format {FORMAT}")
    predictions, vocabulary = body["predictions"], body.get("vocabulary")
    if len(predictions) != entry.get("examples") or body.get("examples") != len(predictions):
        raise DataError(f"{path}: {len(predictions)} predictions, the record names {entry.get('examples')}")
    if vocabulary:
        try:
            predictions = [[vocabulary[i] for i in p] if isinstance(p, list) else p for p in predictions]
        except (IndexError, TypeError):
            raise DataError(f"{path}: a tag id outside the file's vocabulary") from None
    return predictions


def copy_predictions(entries: dict | None, source: Path, target: Path) -> None:
    """The predictions files a record names (``Record.predictions``), copied from ``source`` (the
    directory of the run that made them) to ``target``, each complete or not at all. Every entry is
    checked first (``entry_path``, size, SHA-256): one bad entry and nothing is copied."""
    if entries is not None and not isinstance(entries, dict):
        raise DataError(f"{source}: the record's predictions are not a mapping of splits to files")
    if Path(source).resolve() == Path(target).resolve():
        return
    checked = [(entry_path(source, e).name, _checked_bytes(entry_path(source, e), e)) for e in (entries or {}).values()]
    if checked:
        Path(target).mkdir(parents=True, exist_ok=True)
    for name, data in checked:
        write_bytes_atomic(Path(target) / name, data)
