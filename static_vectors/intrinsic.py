"""Intrinsic checks of a vectors file by gensim's own evaluators on the test sets gensim ships:
word analogies (Mikolov et al. 2013, ``questions-words.txt``: accuracy of 3CosAdd over the questions whose
four words are in the vocabulary, case-insensitive, among the 300,000 most frequent words) and the Spearman
correlation with human judgements on WordSim-353 and SimLex-999 (pairs with a missing word left out,
their share reported). These are the figures the GloVe paper (Pennington et al. 2014, Tables 2-3) reports.

``python -m static_vectors.intrinsic FILE [FILE ...]`` prints them; ``--json`` prints them as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from static_vectors.store import is_hdf5, read_hdf5, text_rows
from suite_common.errors import SuiteError

TEST_SETS = {"analogy": "questions-words.txt", "wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}


def keyed_vectors(path: str | Path):
    """A gensim ``KeyedVectors`` of a vectors file (either format), most frequent word first."""
    import numpy as np
    from gensim.models import KeyedVectors

    if is_hdf5(path):
        words, vectors = read_hdf5(path)
    else:
        rows = [(w, v) for _, w, v in text_rows(path)]
        words, vectors = [w for w, _ in rows], np.stack([v for _, v in rows])
    kv = KeyedVectors(vector_size=vectors.shape[1])
    kv.add_vectors(words, vectors)
    return kv


def intrinsic_figures(path: str | Path) -> dict[str, float]:
    """Analogy accuracy and the two Spearman correlations (4 decimals; None where no pair is covered),
    with the share of each test set that the vocabulary covers."""
    from gensim.test.utils import datapath

    kv = keyed_vectors(path)
    score, sections = kv.evaluate_word_analogies(datapath(TEST_SETS["analogy"]))
    total = next(s for s in sections if s["section"] == "Total accuracy")
    asked = sum(1 for line in open(datapath(TEST_SETS["analogy"]), encoding="utf-8") if not line.startswith(":"))
    out = {
        "analogy_accuracy": round(float(score), 4),
        "analogy_questions_covered": round((len(total["correct"]) + len(total["incorrect"])) / asked, 4),
    }
    for name in ("wordsim353", "simlex999"):
        try:
            _, spearman, oov_percent = kv.evaluate_word_pairs(datapath(TEST_SETS[name]))
        except ValueError:  # gensim's answer when no pair has both words in the vocabulary
            out[f"{name}_spearman"], out[f"{name}_pairs_covered"] = None, 0.0
            continue
        out[f"{name}_spearman"] = round(float(spearman[0]), 4)
        out[f"{name}_pairs_covered"] = round(1 - float(oov_percent) / 100, 4)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m static_vectors.intrinsic", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="vectors files: the suite's .hdf5 or GloVe text")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    try:
        results = {str(f): intrinsic_figures(f) for f in args.files}
    except (SuiteError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for f, figures in results.items():
            print(f, "  ".join(f"{k} {v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
