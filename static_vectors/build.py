"""Train the shipped static word vectors on the embedded biLM's own text (Peters et al. 2018 §4 and
appendix A: the baselines' GloVe/Senna input, which cannot be downloaded here).

One command, seeded, from ``../shared``::

    python -m static_vectors.build                       # 300-, 100- and 50-d into static_vectors/pretrained/lm-text
    python -m static_vectors.build --dims 50 --out /tmp/v  # one size elsewhere

The method is gensim's word2vec, skip-gram with negative sampling (the card says why not GloVe). The text
is the biLM's: ``lm_corpus/train/*.txt`` and ``lm_corpus_large/train/*.txt.gz``, one sentence a line, read
in file-name order. Each size is trained on its own; ``--workers 1`` (the default) repeats bit for bit
from the same text and seed (gensim's word2vec is deterministic on one worker thread only). The most
frequent ``--keep`` words are stored as float16 (``static_vectors.store``), with ``summary.json``: the
parameters, the corpus, times, machine and the intrinsic figures (``static_vectors.intrinsic``).
A size whose file is there with the same parameters is kept, so an interrupted build resumes."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
import zlib
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from static_vectors import ROOT, SHIPPED
from static_vectors.intrinsic import intrinsic_figures
from static_vectors.store import write_hdf5
from suite_common.atomic_files import write_text_atomic
from suite_common.errors import DataError, SuiteError
from suite_common.hashing import file_sha256
from suite_common.machine import cpu_model
from suite_common.progress import progress_bar

SHARED = Path(os.environ.get("ELMO_SHARED", "../shared"))
CORPUS_GLOBS = ("data/lm_corpus/train/*.txt", "data/lm_corpus_large/train/*.txt.gz")


@dataclass(frozen=True)
class Word2VecSettings:
    """gensim ``Word2Vec`` arguments (skip-gram, negative sampling, fastText's subsampling threshold)."""

    sg: int = 1
    window: int = 5
    negative: int = 5
    sample: float = 1e-4
    min_count: int = 5
    epochs: int = 5
    seed: int = 0
    workers: int = 1


def corpus_files(shared: Path) -> list[Path]:
    files = [p for pattern in CORPUS_GLOBS for p in sorted(shared.glob(pattern))]
    if not files:
        raise DataError(f"{shared}: no biLM text found ({', '.join(CORPUS_GLOBS)}); set ELMO_SHARED or --shared")
    return files


class Sentences:
    """The text, one list of tokens per line, read again on each pass (gensim makes one pass for the
    vocabulary and one per epoch)."""

    def __init__(self, files: list[Path]):
        self.files = files

    def __iter__(self):
        for path in self.files:
            with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8") as f:
                for line in f:
                    tokens = line.split()
                    if tokens:
                        yield tokens


def stable_hash(text: str) -> int:
    """A hash that is the same in every process (Python's own ``hash`` of a str is salted per process)."""
    return zlib.crc32(text.encode("utf-8"))


def train(files: list[Path], dim: int, settings: Word2VecSettings):
    """A trained gensim ``Word2Vec``, with a bar over its epochs."""
    from gensim.models import Word2Vec
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochBar(CallbackAny2Vec):
        def __init__(self):
            self.bar = progress_bar(total=settings.epochs, desc=f"word2vec {dim}-d", unit="epoch")

        def on_epoch_end(self, model):
            self.bar.update(1)

    model = Word2Vec(vector_size=dim, hashfxn=stable_hash, **asdict(settings))
    model.build_vocab(Sentences(files))
    model.train(
        Sentences(files),
        total_examples=model.corpus_count,
        epochs=model.epochs,
        callbacks=[EpochBar()],
        report_delay=3600,
    )
    return model


def build_one(files: list[Path], dim: int, settings: Word2VecSettings, keep: int, out: Path) -> dict:
    """Train one size, store its ``keep`` most frequent words, and return its summary entry."""
    import gensim

    started = time.time()
    model = train(files, dim, settings)
    seconds = time.time() - started
    words = model.wv.index_to_key[:keep]  # most frequent first
    path = out / f"vectors_{dim}d.hdf5"
    write_hdf5(path, words, model.wv.vectors[: len(words)], method="word2vec skip-gram", seed=settings.seed)
    kept_tokens = sum(model.wv.get_vecattr(w, "count") for w in words)
    counted = sum(model.wv.get_vecattr(w, "count") for w in model.wv.index_to_key)
    return {
        "file": path.name,
        "sha256": file_sha256(path),
        "dim": dim,
        "settings": asdict(settings),
        "keep": keep,
        "library": f"gensim {gensim.__version__}",
        "corpus_tokens": int(model.corpus_total_words),
        "corpus_sentences": int(model.corpus_count),
        "vocabulary_min_count": len(model.wv.index_to_key),
        "words_kept": len(words),
        "corpus_tokens_covered_by_kept": round(kept_tokens / model.corpus_total_words, 4),
        "corpus_tokens_covered_by_min_count": round(counted / model.corpus_total_words, 4),
        "train_seconds": round(seconds, 1),
        "machine": f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m static_vectors.build " + " ".join(sys.argv[1:]),
        "intrinsic": intrinsic_figures(path),
    }


def read_summary(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not JSON ({e}); remove it to build again") from None


def build(shared: Path, out: Path, dims: list[int], settings: Word2VecSettings, keep: int, force: bool) -> dict:
    files = corpus_files(shared)
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "summary.json"
    summary = read_summary(summary_path)
    corpus = [{"file": str(p.relative_to(shared)), "sha256": file_sha256(p)} for p in files]
    for dim in dims:
        entry = summary.get(f"{dim}d")
        path = out / f"vectors_{dim}d.hdf5"
        same = (
            entry
            and entry["settings"] == asdict(settings)
            and entry["keep"] == keep
            and summary.get("corpus") == corpus
        )
        if same and not force and path.exists() and file_sha256(path) == entry["sha256"]:
            print(f"{path}: built already with these settings (--force builds it again)", file=sys.stderr)
            continue
        entry = build_one(files, dim, settings, keep, out)
        summary = read_summary(summary_path)  # another size may have been written meanwhile
        summary["corpus"] = corpus
        summary[f"{dim}d"] = entry
        write_text_atomic(summary_path, json.dumps(summary, indent=1, sort_keys=True) + "\n")
        print(f"{path}: {entry['words_kept']:,} words, {entry['train_seconds']:.0f} s; {entry['intrinsic']}")
    return summary


def main(argv: list[str] | None = None) -> int:
    defaults = Word2VecSettings()
    parser = argparse.ArgumentParser(prog="python -m static_vectors.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared data folder (default: ../shared)")
    parser.add_argument("--out", type=Path, default=ROOT / SHIPPED, help="where the files go")
    parser.add_argument("--dims", type=int, nargs="+", default=[300, 100, 50], help="the sizes to build")
    parser.add_argument("--keep", type=int, default=80_000, help="the most frequent words stored")
    parser.add_argument("--epochs", type=int, default=defaults.epochs, help="passes over the text")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="word2vec's seed")
    parser.add_argument("--workers", type=int, default=defaults.workers, help="threads (only 1 repeats exactly)")
    parser.add_argument("--min-count", type=int, default=defaults.min_count, help="the fewest occurrences of a word")
    parser.add_argument("--force", action="store_true", help="train again sizes that are built already")
    args = parser.parse_args(argv)
    settings = Word2VecSettings(epochs=args.epochs, seed=args.seed, workers=args.workers, min_count=args.min_count)
    try:
        build(args.shared, args.out, args.dims, settings, args.keep, args.force)
    except (SuiteError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
