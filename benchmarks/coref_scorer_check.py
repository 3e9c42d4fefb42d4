"""Check the suite's coreference metrics (``tasks.coref.metric``: MUC, B³, CEAFφ4, Peters et al.
2018 Table 1's "average F1") against the official reference scorer (Pradhan et al. 2014;
``scorer.pl`` of github.com/conll/reference-coreference-scorers, not shipped here: pass its path).

    python -m benchmarks.coref_scorer_check --scorer PATH/scorer.pl [--key FILE] [--seeds 0 1]

For each seed, a response is made from the key's own clusters by dropping 20 % of the mentions,
merging some clusters and adding spurious mentions; it is written with the task's CoNLL-2012
writer and scored by both. Prints both sets of P/R/F1 and the largest difference (the reference
prints two decimals, so differences up to 0.01 are rounding).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import tempfile
from pathlib import Path

from benchmarks import SHARED
from tasks.coref.metric import coref_scores
from tasks.coref.reader import read_conll2012_coref, write_conll2012_coref

ROOT = Path(__file__).resolve().parents[1]
KEY = SHARED / "data/coref_litbank/dev.conll"


def perturbed_response(documents, seed: int) -> list[list[list[list[int]]]]:
    rng, response = random.Random(seed), []
    for doc in documents:
        clusters = [kept for c in doc["clusters"] if (kept := [list(m) for m in c if rng.random() > 0.2])]
        rng.shuffle(clusters)
        merged = []
        for c in clusters:
            if merged and rng.random() < 0.15:
                merged[-1] += c
            else:
                merged.append(c)
        n = sum(len(s) for s in doc["sentences"])
        for _ in range(20):
            start = rng.randrange(n - 3)
            merged.append(
                [[start, start + rng.randrange(3)]] + ([[start + 3, start + 3]] if rng.random() < 0.5 else [])
            )
        seen, final = set(), []
        for c in merged:  # every mention in one cluster only, as the reference scorer requires
            c = [m for m in c if tuple(m) not in seen and not seen.add(tuple(m))]
            if c:
                final.append(c)
        response.append(final)
    return response


def reference_scores(scorer: Path, metric: str, key: Path, response: Path) -> tuple[float, float, float]:
    out = subprocess.run(
        ["perl", str(scorer), metric, str(key), str(response), "none"], capture_output=True, text=True, check=True
    ).stdout
    line = [line for line in out.splitlines() if line.startswith("Coreference:")][-1]
    recall, precision, f1 = (float(x) for x in re.findall(r"([\d.]+)%", line))
    return precision, recall, f1


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scorer", type=Path, required=True, help="the reference scorer.pl")
    ap.add_argument("--key", type=Path, default=KEY, help="a CoNLL-2012 coreference key file")
    ap.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0, 1],
        help="seeds of the perturbed responses scored (one response per seed)",
    )
    args = ap.parse_args(argv)
    documents, _ = read_conll2012_coref(args.key)
    worst = 0.0
    for seed in args.seeds:
        response = perturbed_response(documents, seed)
        with tempfile.TemporaryDirectory() as tmp:
            path = write_conll2012_coref(Path(tmp) / "response.conll", documents, response)
            ours = coref_scores([d["clusters"] for d in documents], response)
            print(f"seed {seed}: {args.key}")
            for metric, name in (("muc", "muc"), ("bcub", "b_cubed"), ("ceafe", "ceafe")):
                p, r, f = reference_scores(args.scorer, metric, args.key, path)
                mine = ours[name]
                worst = max(worst, abs(p - mine["precision"]), abs(r - mine["recall"]), abs(f - mine["f1"]))
                print(
                    f"  {name:8s} reference P {p:6.2f} R {r:6.2f} F1 {f:6.2f} | ours P {mine['precision']:6.2f} "
                    f"R {mine['recall']:6.2f} F1 {mine['f1']:6.2f}"
                )
            print(f"  CoNLL F1 (ours) {ours['conll_f1']:.2f}")
    print(f"largest difference: {worst:.4f} points")


if __name__ == "__main__":
    main()
