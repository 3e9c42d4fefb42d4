"""biLM time of an N-configuration sweep on one dataset, with and without the activation cache
(Peters et al. 2018 §3.3: the biLM is frozen, so its layers can be computed once).

    python -m benchmarks.cache_sweep [--configs 6] [--epochs 3] [--sentences 1000]

Both sides are executed, not extrapolated:
* without the cache, each configuration runs the biLM over the dataset every epoch (what a
  trainer without a cache does);
* with the cache, the first configuration builds it (one biLM pass) and every epoch of every
  configuration reads its batches from the memory-mapped file.
Prints total seconds of biLM work (or cache reads) per side and the ratio.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.bilm_speed import DEFAULT_CONLL, read_conll_sentences
from elmo_core import batch_to_ids, load_bilm
from elmo_core.pretrained import model_dir
from encoders import BiLMEncoder
from encoders.activation_cache import ActivationCache
from tasks.base import index_batches


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", type=int, default=6, help="configurations in the sweep (N)")
    ap.add_argument("--epochs", type=int, default=3, help="training epochs of each configuration")
    ap.add_argument("--sentences", type=int, default=1000, help="CoNLL-2003 sentences the sweep trains on")
    ap.add_argument("--batch-size", type=int, default=32, help="task batch size")
    ap.add_argument("--conll", type=Path, default=DEFAULT_CONLL, help="CoNLL-2003 file the sentences come from")
    ap.add_argument("--model", type=Path, help="biLM directory (default: the embedded one)")
    args = ap.parse_args(argv)
    d = args.model or model_dir("small")
    options, weights = d / "options.json", d / "weights.hdf5"
    sentences = read_conll_sentences(args.conll, args.sentences)
    n_tok = sum(map(len, sentences))
    print(
        f"{len(sentences)} sentences, {n_tok} tokens; sweep of {args.configs} configurations x {args.epochs} epochs; "
        f"biLM {d}; torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    bilm = load_bilm(options, weights)
    order = index_batches(len(sentences), args.batch_size, shuffle=False)

    start = time.perf_counter()
    for _ in range(args.configs * args.epochs):
        for idx in order:
            with torch.inference_mode():
                bilm(batch_to_ids([sentences[i] for i in idx]))
    without = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cached = ActivationCache(tmp, BiLMEncoder(options, weights)).get(sentences, "benchmark")
        build = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(args.configs * args.epochs):
            for idx in order:
                cached.batch(idx)
        reads = time.perf_counter() - start
        size_mb = (cached.directory / "layers.npy").stat().st_size / 2**20
    with_cache = build + reads
    print(f"without cache: {without:8.2f} s  ({args.configs * args.epochs} biLM passes)")
    print(
        f"with cache:    {with_cache:8.2f} s  (1 biLM pass + checksums: {build:.2f} s; "
        f"{args.configs * args.epochs} epochs of reads: {reads:.2f} s; cache {size_mb:.0f} MB)"
    )
    print(f"ratio: {without / with_cache:.1f}x less biLM time with the cache")


if __name__ == "__main__":
    main()
