"""Training data for the biLM (Peters et al. 2018, §3.1 and §3.4), in the original format:
plain text, one whitespace-tokenized sentence per line, any number of files; a file whose name
ends in ``.gz`` is read through gzip (held decompressed in memory while a stream reads it).

* ``Vocabulary``: built from the corpus (count >= ``min_count``), sorted by decreasing frequency,
  with ``<S>``, ``</S>``, ``<UNK>`` first — the original ``vocab.txt`` layout. Out-of-vocabulary
  words become ``<UNK>`` as softmax targets only; the input is always characters.
* ``LMStream``: the original batching. Every sentence is wrapped in ``<S>`` ... ``</S>`` and the
  sentences are packed back to back into ``batch_size`` parallel rows of ``unroll_steps`` tokens,
  so an LSTM state can be carried from one batch to the next per row (truncated BPTT). The
  backward LM reads a second stream made of the same sentences reversed.
* Order (``order=``): ``interleaved`` (default) shuffles each file's sentences and interleaves
  the files at random in their corpus proportions — every next sentence comes from a file drawn
  with probability proportional to the sentences it has left — so every stretch of batches mixes
  the sources as the corpus does. Sentences are read through a line-offset index (``CorpusIndex``,
  8 bytes per sentence, over the mapped file or the decompressed bytes), not held as lists.
  ``files`` is the original code's order, one file (shard) at a time: right for shards of one
  homogeneous corpus, but on a corpus of several sources the model drifts towards the file it read
  last. Either way the order is a pure function of (files, seed, epoch), so a run resumes by
  skipping batches.
"""

from __future__ import annotations

import glob
import gzip
import json
import mmap
import random
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from suite_common.atomic_files import write_text_atomic
from suite_common.errors import DataError
from suite_common.hashing import sha256_hex

from ..characters import BOS_TOKEN, EOS_TOKEN, token_to_ids

UNK_TOKEN = "<UNK>"


class CorpusError(DataError):
    pass


def expand_files(patterns: str | Iterable[str]) -> list[Path]:
    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    files = []
    for pattern in patterns:
        matched = sorted(glob.glob(str(pattern)))
        if not matched:
            raise CorpusError(f"no file matches {pattern!r}")
        files += [Path(m) for m in matched]
    return files


def _tokens(raw: bytes, path: Path, lineno: int) -> list[str]:
    try:
        return raw.decode("utf-8").split()
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}:{lineno}: not valid UTF-8 ({e.reason})") from None


def is_gzip(path: Path) -> bool:
    return Path(path).name.endswith(".gz")


def read_text_bytes(path: Path) -> bytes | mmap.mmap:
    """A corpus file's bytes: a ``.gz`` file decompressed whole (a truncated or corrupt one is a
    ``CorpusError`` naming it), a plain one mapped read-only (an empty one as ``b""``)."""
    path = Path(path)
    if is_gzip(path):
        try:
            with gzip.open(path, "rb") as f:
                return f.read()
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise CorpusError(f"{path}: not a complete gzip file ({type(e).__name__}: {e})") from None
    with open(path, "rb") as f:
        if f.seek(0, 2) == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def text_lines(path: Path) -> Iterator[bytes]:
    """The raw lines of a corpus file, streamed (decompressed on the fly for ``.gz``)."""
    path = Path(path)
    try:
        with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as f:
            yield from f
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise CorpusError(f"{path}: not a complete gzip file ({type(e).__name__}: {e})") from None


def read_sentences(path: Path) -> list[list[str]]:
    """All sentences of one file; blank lines are skipped, non-UTF-8 is an error (file:line)."""
    sentences = []
    for lineno, raw in enumerate(text_lines(path), 1):
        tokens = _tokens(raw, path, lineno)
        if tokens:
            sentences.append(tokens)
    return sentences


class CorpusIndex:
    """Byte offsets of the non-blank lines of each file, for reading sentences in any order
    without holding them as lists (one pass over each file when first needed; UTF-8 checked then).
    A plain file is mapped; a ``.gz`` file is held decompressed (its bytes, not Python strings)."""

    def __init__(self, files: list[Path]):
        self.files = list(files)
        self._offsets: dict[Path, np.ndarray] = {}
        self._text: dict[Path, bytes | mmap.mmap] = {}

    def offsets(self, path: Path) -> np.ndarray:
        if path not in self._offsets:
            data = self.text(path)
            found, position, size = [], 0, len(data)
            lineno = 0
            while position < size:
                end = data.find(b"\n", position)
                end = size if end < 0 else end + 1
                lineno += 1
                if _tokens(data[position:end], path, lineno):
                    found.append(position)
                position = end
            self._offsets[path] = np.asarray(found, dtype=np.int64)
        return self._offsets[path]

    def text(self, path: Path) -> bytes | mmap.mmap:
        if path not in self._text:
            self._text[path] = read_text_bytes(path)
        return self._text[path]

    def sentence_at(self, path: Path, start: int) -> list[str]:
        """The tokens of the line of ``path`` that starts at byte ``start`` (one of its ``offsets``;
        UTF-8 was checked when the file was indexed)."""
        data, start = self.text(path), int(start)
        end = data.find(b"\n", start)
        return data[start : len(data) if end < 0 else end].decode("utf-8").split()

    def counts(self) -> list[int]:
        return [len(self.offsets(p)) for p in self.files]

    def __getstate__(self) -> dict:  # worker processes map or decompress the files again
        return {"files": self.files, "_offsets": self._offsets, "_text": {}}


class Vocabulary:
    def __init__(self, words: list[str]):
        if words[:3] != [BOS_TOKEN, EOS_TOKEN, UNK_TOKEN]:
            raise CorpusError(f"a vocabulary must start with {BOS_TOKEN}, {EOS_TOKEN}, {UNK_TOKEN}")
        if len(set(words)) != len(words):
            raise CorpusError("the vocabulary has duplicate words")
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}
        self.unk = 2

    def __len__(self) -> int:
        return len(self.words)

    def id(self, word: str) -> int:
        return self.index.get(word, self.unk)

    @classmethod
    def build(cls, files: list[Path], min_count: int = 3, max_size: int | None = None) -> Vocabulary:
        counts = count_words(files)
        for special in (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN):
            counts.pop(special, None)
        ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        if max_size:
            ranked = ranked[: max_size - 3]
        return cls([BOS_TOKEN, EOS_TOKEN, UNK_TOKEN] + ranked)

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        words = Path(path).read_text(encoding="utf-8").split("\n")
        words = [w.strip() for w in words if w.strip()]
        try:
            return cls(words)
        except CorpusError as e:
            raise CorpusError(f"{path}: {e}") from None

    def save(self, path: str | Path) -> None:
        write_text_atomic(path, "\n".join(self.words) + "\n")  # never a half-written vocabulary

    def digest(self) -> str:
        return sha256_hex("\n".join(self.words))[:16]


def count_words(files: list[Path]) -> Counter:
    """How often each token occurs in ``files`` (streamed; non-UTF-8 is an error naming file:line)."""
    counts: Counter = Counter()
    for path in files:
        for lineno, raw in enumerate(text_lines(path), 1):
            counts.update(_tokens(raw, path, lineno))
    return counts


class CharCache:
    """token -> character ids (max_chars,) as int64 numpy, memoized."""

    def __init__(self, max_chars: int = 50, limit: int = 500_000):
        self.max_chars, self.limit, self.table = max_chars, limit, {}

    def __call__(self, token: str) -> np.ndarray:
        ids = self.table.get(token)
        if ids is None:
            if len(self.table) >= self.limit:
                self.table.clear()
            ids = self.table[token] = np.asarray(token_to_ids(token, self.max_chars), dtype=np.int64)
        return ids


@dataclass
class LMBatch:
    """One step of both streams. ``*_tokens`` are the input words (for characters), ``*_targets``
    the vocabulary ids to predict; each (rows, unroll_steps). Rows that ran out of data are padded
    with target -1 (ignored) and lengths < unroll_steps."""

    forward_chars: np.ndarray
    forward_targets: np.ndarray
    backward_chars: np.ndarray
    backward_targets: np.ndarray
    lengths: np.ndarray


STREAM_ORDERS = ("interleaved", "files")


class LMStream:
    """Batches of the biLM's two streams over ``files``. ``shuffle=False`` reads every file in
    order, one after the other (held-out text); otherwise ``order`` decides (module docstring)."""

    def __init__(
        self,
        files: list[Path],
        vocab: Vocabulary,
        batch_size: int,
        unroll_steps: int,
        seed: int = 0,
        shuffle: bool = True,
        max_chars: int = 50,
        order: str = "interleaved",
    ):
        if order not in STREAM_ORDERS:
            raise CorpusError(f"unknown stream order {order!r} (one of {', '.join(STREAM_ORDERS)})")
        self.files, self.vocab, self.order = files, vocab, order
        self.batch_size, self.unroll_steps, self.seed, self.shuffle = batch_size, unroll_steps, seed, shuffle
        self.chars = CharCache(max_chars)
        self.index = CorpusIndex(files)

    def sentences(self, epoch: int) -> Iterator[list[str]]:
        if self.shuffle and self.order == "interleaved":
            yield from self._interleaved(epoch)
            return
        order = list(self.files)
        if self.shuffle:
            random.Random(f"{self.seed}-{epoch}").shuffle(order)
        for path in order:
            sentences = read_sentences(path)
            if self.shuffle:
                random.Random(f"{self.seed}-{epoch}-{path.name}").shuffle(sentences)
            yield from sentences

    def _interleaved(self, epoch: int) -> Iterator[list[str]]:
        """Each file's sentences in a seeded random order; the files interleaved by a seeded
        random permutation of the multiset {file k: n_k times} — the same as drawing each next
        file with probability proportional to the sentences it has left."""
        orders = []
        for path in self.files:
            offsets = self.index.offsets(path).tolist()
            random.Random(f"{self.seed}-{epoch}-{path.name}").shuffle(offsets)
            orders.append(offsets)
        draws = [k for k, order in enumerate(orders) for _ in range(len(order))]
        random.Random(f"{self.seed}-{epoch}-interleave").shuffle(draws)
        next_of = [0] * len(self.files)
        for k in draws:
            yield self.index.sentence_at(self.files[k], orders[k][next_of[k]])
            next_of[k] += 1

    def batches(self, epoch: int = 0, skip: int = 0, shard: tuple[int, int] = (0, 1)) -> Iterator[LMBatch]:
        """The epoch's batches; ``skip`` fast-forwards (to resume) without building the skipped ones.
        ``shard=(k, n)``: only every n-th of the batches after ``skip``, from the k-th on (the others
        are packed but not assembled), so that n worker processes together give every batch once
        (``lm_prefetch``).

        A row holds (sentence with boundaries, position); a piece of ``take`` predictions uses
        words[pos : pos+take+1]. The backward stream packs the reversed sentences the same way;
        as packing depends only on lengths, its piece at the same place is rev[pos : pos+take+1].
        """
        source = self.sentences(epoch)
        B, T = self.batch_size, self.unroll_steps
        rows: list[tuple[list[str], int]] = [([], 0)] * B
        exhausted, n = False, 0
        while True:  # until every row has used up its last sentence
            chunks = []
            for r in range(B):
                chunk: list[tuple[list[str], int, int]] = []
                have = 0
                while have < T:
                    words, pos = rows[r]
                    if len(words) - pos <= 1:
                        sentence = None if exhausted else next(source, None)
                        if sentence is None:
                            exhausted = True
                            break
                        words, pos = [BOS_TOKEN] + sentence + [EOS_TOKEN], 0
                    take = min(len(words) - pos - 1, T - have)
                    chunk.append((words, pos, take))
                    rows[r] = (words, pos + take)
                    have += take
                chunks.append(chunk)
            if all(not c for c in chunks):
                return
            n += 1
            if n > skip and (n - skip - 1) % shard[1] == shard[0]:
                yield self._assemble(chunks)

    def _assemble(self, chunks) -> LMBatch:
        B, T, C = self.batch_size, self.unroll_steps, self.chars.max_chars
        chars = [np.zeros((B, T, C), np.int64) for _ in range(2)]
        targets = [np.full((B, T), -1, np.int64) for _ in range(2)]
        lengths = np.zeros(B, np.int64)
        for r, chunk in enumerate(chunks):
            t = 0
            for words, pos, take in chunk:
                for d, seq in enumerate((words, words[::-1])):
                    for k in range(take):
                        chars[d][r, t + k] = self.chars(seq[pos + k])
                        targets[d][r, t + k] = self.vocab.id(seq[pos + k + 1])
                t += take
            lengths[r] = max(t, 1)  # a row past the end of data: one ignored dummy position
        return LMBatch(chars[0], targets[0], chars[1], targets[1], lengths)


class SentenceStream(LMStream):
    """The same batching over a fixed list of sentences, in order (a held-out slice)."""

    def __init__(
        self, sentences: list[list[str]], vocab: Vocabulary, batch_size: int, unroll_steps: int, max_chars: int = 50
    ):
        super().__init__([], vocab, batch_size, unroll_steps, shuffle=False, max_chars=max_chars)
        self.fixed = sentences

    def sentences(self, epoch: int) -> Iterator[list[str]]:
        yield from self.fixed


def why_no_sources(files: list[str]) -> str | None:
    """Why ``heldout_sources`` gives no per-source split for these held-out files (None: it does)."""
    if len(files) != 1:
        return f"{len(files)} held-out files; the per-source split reads one file and the stats.json beside it"
    stats_path = Path(files[0]).parent / "stats.json"
    if not stats_path.exists():
        return f'no {stats_path} (a JSON object: source name -> {{"heldout_sentences": N}}, in file order)'
    try:
        stats = json.loads(stats_path.read_text())
        [int(entry["heldout_sentences"]) for entry in stats.values()]
    except (ValueError, KeyError, TypeError, AttributeError):
        return f'{stats_path} has no "heldout_sentences" count per source'
    return None


def heldout_sources(path: str | Path) -> dict[str, list[list[str]]] | None:
    """The held-out file split by source, when a ``stats.json`` beside it lists, in file order,
    each source's ``heldout_sentences`` (the layout of ``../shared/data/lm_corpus``); ``None``
    when there is no such file or it has no such counts. Counts that do not add up to the
    file's sentences are an error."""
    path = Path(path)
    stats_path = path.parent / "stats.json"
    if not stats_path.exists():
        return None
    try:
        stats = json.loads(stats_path.read_text())
        counts = [(name, int(entry["heldout_sentences"])) for name, entry in stats.items()]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # some other stats.json: no per-source breakdown
    sentences = read_sentences(path)
    if sum(n for _, n in counts) != len(sentences):
        raise CorpusError(
            f"{stats_path}: the per-source held-out counts add up to {sum(n for _, n in counts)}, "
            f"but {path} has {len(sentences)} sentences"
        )
    sources, start = {}, 0
    for name, n in counts:
        sources[name], start = sentences[start : start + n], start + n
    return sources
