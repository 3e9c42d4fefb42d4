"""Nearest neighbours of a word in context and out of context (Peters et al. 2018 §5.3, Table 4).

    python -m elmo_core.neighbors --word play --corpus '../shared/data/lm_corpus/train/*.txt' \
        [--model elmo_core/pretrained/small] [--layer top|mix] [--queries 4] [--out results/table4.md]

Out of context: the token layer (the character CNN's x_k, one vector per word type) of the word,
and its nearest word types (cosine) among the corpus's ``--vocabulary`` most frequent words — the
analogue of the paper's GloVe row. In context: every occurrence of the word in (up to
``--max-sentences`` of) the corpus sentences that contain it is embedded by the biLM (stateless);
for ``--queries`` occurrences, spread over the corpus files, the nearest other occurrence (cosine of
the top layer, or of the average of the biLM layers with ``--layer mix``) is printed with its
sentence, as the paper's biLM rows. ``--out`` appends a Markdown table (Table 4's layout) to a file.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from suite_common.errors import ConfigError, SuiteError

from .characters import batch_to_ids
from .embed import embed_sentences
from .original_format import load_bilm
from .pretrained import model_dir
from .pretraining.lm_data import expand_files, read_sentences


def occurrences(files: list[Path], word: str, limit: int, seed: int) -> list[tuple[str, list[str], int]]:
    """(file name, sentence, position) of each occurrence of ``word`` (case-sensitive token
    match), at most ``limit`` sentences, drawn evenly from the files that contain it."""
    per_file = []
    for path in files:
        found = [(path.stem, s, i) for s in read_sentences(path) for i, t in enumerate(s) if t == word]
        if found:
            per_file.append(found)
    if not per_file:
        raise ConfigError(f"{word!r} does not occur in the corpus")
    rng, chosen = random.Random(seed), []
    share = max(1, limit // len(per_file))
    for found in per_file:
        chosen += rng.sample(found, min(share, len(found)))
    return chosen[:limit]


def contextual_vectors(bilm, found, layer: str, batch_size: int = 64) -> np.ndarray:
    sentences = [s for _, s, _ in found]
    vectors = np.zeros((len(found), 2 * bilm.opts.projection_dim), np.float32)
    for i, layers in embed_sentences(bilm, sentences, batch_size, progress=False):
        at = layers[:, found[i][2]]  # (L+1, D)
        vectors[i] = at[-1] if layer == "top" else at.mean(axis=0)
    return vectors


def token_vectors(bilm, words: list[str], batch: int = 2048) -> np.ndarray:
    out = []
    with torch.inference_mode():
        for start in range(0, len(words), batch):
            ids = batch_to_ids([[w] for w in words[start : start + batch]])[:, 0].to(bilm.bos_ids.device)
            out.append(bilm.token_representations(ids).float().cpu().numpy())
    return np.concatenate(out)


def nearest(query: np.ndarray, candidates: np.ndarray, k: int, exclude: set[int] = frozenset()) -> list[int]:
    q = query / (np.linalg.norm(query) + 1e-12)
    c = candidates / (np.linalg.norm(candidates, axis=1, keepdims=True) + 1e-12)
    order = np.argsort(-(c @ q), kind="stable")
    return [int(i) for i in order if int(i) not in exclude][:k]


def table(word: str, type_neighbours: list[str], pairs, layer: str, model: str) -> str:
    def sent(s, i):
        return " ".join(s[:i] + [f"**{s[i]}**"] + s[i + 1 :]).replace("|", "\\|")

    lines = [
        f"### {word!r} (biLM `{model}`, contextual vectors: {layer} layer{'s averaged' if layer == 'mix' else ''})",
        "",
        "| source | nearest neighbours |",
        "|---|---|",
        f"| token layer (out of context): {word} | {', '.join(type_neighbours)} |",
    ]
    lines += [f"| biLM ({qf}): {sent(qs, qi)} | ({nf}) {sent(ns, ni)} |" for (qf, qs, qi), (nf, ns, ni) in pairs]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m elmo_core.neighbors",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--word", required=True, help="the word (a token, matched exactly)")
    ap.add_argument("--corpus", nargs="+", required=True, help="text files or globs, one tokenized sentence per line")
    ap.add_argument("--model", type=Path, help="exported biLM directory (default: the embedded one)")
    ap.add_argument(
        "--layer", choices=("top", "mix"), default="top", help="top biLM layer, or the average of all layers"
    )
    ap.add_argument("--queries", type=int, default=4, help="occurrences to show with their nearest neighbour")
    ap.add_argument("--neighbours", type=int, default=10, help="nearest word types of the token layer")
    ap.add_argument("--vocabulary", type=int, default=20000, help="most frequent corpus words searched out of context")
    ap.add_argument("--max-sentences", type=int, default=2000, help="sentences with the word that are embedded")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample of occurrences")
    ap.add_argument("--out", type=Path, help="append the Markdown table to this file")
    args = ap.parse_args(argv)
    try:
        directory = args.model or model_dir("small")
        bilm = load_bilm(directory / "options.json", directory / "weights.hdf5")
        files = expand_files(args.corpus)
        found = occurrences(files, args.word, args.max_sentences, args.seed)
        counts = Counter(t for f in files for s in read_sentences(f) for t in s)
        vocabulary = [w for w, _ in counts.most_common(args.vocabulary)]
        if args.word not in vocabulary:
            vocabulary.append(args.word)
        types = token_vectors(bilm, vocabulary)
        query = vocabulary.index(args.word)
        type_neighbours = [vocabulary[i] for i in nearest(types[query], types, args.neighbours, {query})]
        vectors = contextual_vectors(bilm, found, args.layer)
        rng = random.Random(args.seed)
        by_file = {}
        for k, (name, _, _) in enumerate(found):
            by_file.setdefault(name, []).append(k)
        picks = [rng.choice(ks) for _, ks in sorted(by_file.items())][: args.queries]
        pairs = []
        for q in picks:
            same = {k for k, f in enumerate(found) if f[1] == found[q][1]}  # not the query's own sentence
            n = nearest(vectors[q], vectors, 1, same)[0]
            pairs.append((found[q], found[n]))
    except (SuiteError, OSError) as e:
        raise SystemExit(f"error: {e}") from None
    text = table(args.word, type_neighbours, pairs, args.layer, str(directory))
    print(text)
    print(f"({len(found)} occurrences embedded; {len(vocabulary)} word types searched out of context)")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
