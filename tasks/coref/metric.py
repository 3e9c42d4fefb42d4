"""Coreference metrics of the CoNLL-2011/2012 shared tasks, the paper's coreference score
(Peters et al. 2018, Table 1: "average F1"): MUC (Vilain et al. 1995), B³ (Bagga & Baldwin 1998)
and CEAFφ4 (entity-based CEAF, Luo 2005), and their average F1 (the CoNLL score).

As the reference scorer computes them (Pradhan et al. 2014; ``scorer.pl`` v8.01): clusters are
taken as given (a singleton counts for B³ and CEAF, never for MUC); a response mention that is not
in the key counts against precision; a response mention of the key that appears again, in the same
or a later cluster, counts only where it first appears (the scorer drops the repeats, and then any
cluster left empty); numerators and denominators are summed over all documents before dividing
(micro average); a ratio with a zero denominator is 0. CEAFφ4's one-to-one alignment of key and
response clusters is optimal (``scipy.optimize.linear_sum_assignment``). The one rule that differs:
a mention *outside* the key repeated in the response counts once here, while the scorer keeps its
repeats (it refuses files with more than 10 repeats anyway).

``score_files(key, response)`` scores two CoNLL-2012 files as ``scorer.pl all key response``
does (documents matched by name, clusters in the order of their first mark):
``python -m tasks.coref.metric KEY RESPONSE``.

A cluster is a collection of mentions; a mention is any hashable (here ``(start, end)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

Cluster = Sequence
METRICS = ("muc", "b_cubed", "ceafe")


def _as_sets(clusters: Iterable[Cluster]) -> list[frozenset]:
    return [frozenset(tuple(m) if isinstance(m, list) else m for m in c) for c in clusters if len(c)]


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def muc_counts(key: list[frozenset], response: list[frozenset]) -> tuple[float, float]:
    """Σ (|K| − |partitions of K by the response|) and Σ (|K| − 1) over key clusters K."""
    where = {m: i for i, c in enumerate(response) for m in c}
    num = den = 0
    for cluster in key:
        parts = {where.get(m, ("alone", m)) for m in cluster}  # a mention outside the response: its own part
        num += len(cluster) - len(parts)
        den += len(cluster) - 1
    return num, den


def b_cubed_counts(key: list[frozenset], response: list[frozenset]) -> tuple[float, float]:
    """Σ_K Σ_R |K ∩ R|² / |K| and Σ_K |K|."""
    num = sum(len(k & r) ** 2 / len(k) for k in key for r in response)
    return num, sum(len(k) for k in key)


def ceafe_counts(key: list[frozenset], response: list[frozenset]) -> tuple[float, float, float]:
    """The best one-to-one alignment's Σ φ4(K, R) = 2|K ∩ R| / (|K| + |R|); |key|; |response|."""
    if not key or not response:
        return 0.0, len(key), len(response)
    similarity = np.array([[2 * len(k & r) / (len(k) + len(r)) for r in response] for k in key])
    rows, cols = linear_sum_assignment(-similarity)
    return float(similarity[rows, cols].sum()), len(key), len(response)


def without_repeats(key: list[frozenset], response: Iterable[Cluster]) -> list[list]:
    """The response as the scorer keeps it: a mention of the key counts only in the first cluster
    (in the given order) where it appears; clusters left empty are dropped."""
    in_key = set().union(*key) if key else set()
    placed, out = set(), []
    for cluster in response:
        kept = []
        for m in cluster:
            m = tuple(m) if isinstance(m, list) else m
            if m in placed:
                continue
            if m in in_key:
                placed.add(m)
            kept.append(m)
        if kept:
            out.append(kept)
    return out


def document_counts(key_doc: Iterable[Cluster], response_doc: Iterable[Cluster]) -> np.ndarray:
    """One document's 12 counts: per metric (MUC, B³, CEAFφ4) recall numerator and denominator,
    precision numerator and denominator. Summed over documents they give ``coref_scores``."""
    key = _as_sets(key_doc)
    response = _as_sets(without_repeats(key, response_doc))
    similarity, n_key, n_response = ceafe_counts(key, response)
    return np.array(
        [
            *muc_counts(key, response),
            *muc_counts(response, key),
            *b_cubed_counts(key, response),
            *b_cubed_counts(response, key),
            similarity,
            n_key,
            similarity,
            n_response,
        ],
        dtype=float,
    )


def conll_f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """CoNLL F1 (in %) of summed ``document_counts``: the mean of MUC, B³ and CEAFφ4 F1."""
    total = 0.0
    for m in range(len(METRICS)):
        rn, rd, pn, pd = (sums[..., 4 * m + k] for k in range(4))
        r = np.where(rd > 0, rn / np.where(rd > 0, rd, 1), 0.0)
        p = np.where(pd > 0, pn / np.where(pd > 0, pd, 1), 0.0)
        total = total + np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    return 100 * total / len(METRICS)


def coref_scores(key_documents: Iterable[Iterable[Cluster]], response_documents: Iterable[Iterable[Cluster]]) -> dict:
    """P/R/F1 (in %) of MUC, B³ and CEAFφ4 over all documents, and ``conll_f1`` (their average F1)."""
    total = np.zeros(12)  # per metric: recall num, recall den, precision num, precision den
    for key_doc, response_doc in zip(key_documents, response_documents, strict=True):
        total += document_counts(key_doc, response_doc)
    sums = {name: total[4 * m : 4 * m + 4] for m, name in enumerate(METRICS)}
    out = {}
    for name, (rn, rd, pn, pd) in sums.items():
        r, p = _ratio(rn, rd), _ratio(pn, pd)
        out[name] = {"precision": 100 * p, "recall": 100 * r, "f1": 100 * _f1(p, r)}
    out["conll_f1"] = sum(out[name]["f1"] for name in METRICS) / len(METRICS)
    return out


def score_files(key_path, response_path) -> dict:
    """``coref_scores`` of two CoNLL-2012 files: documents matched by name (a key document missing
    from the response scores as an empty response), response clusters in file order."""
    from suite_common.errors import DataError

    from .reader import read_conll2012_coref

    key, _ = read_conll2012_coref(key_path)
    response, _ = read_conll2012_coref(response_path)
    by_name = {d["doc_key"]: d["clusters_in_file_order"] for d in response}
    unknown = sorted(set(by_name) - set(key["doc_key"]))
    if unknown:
        raise DataError(f"{response_path}: document {unknown[0]!r} is not in the key {key_path}")
    return coref_scores(key["clusters"], [by_name.get(name, []) for name in key["doc_key"]])


def main(argv=None) -> None:
    import argparse
    import json

    from suite_common.errors import SuiteError

    ap = argparse.ArgumentParser(
        description="MUC, B3, CEAF-e and the CoNLL F1 of a response file against a key "
        "file (CoNLL-2012 layout), as the reference scorer computes them."
    )
    ap.add_argument("key", help="the gold file (CoNLL-2012 layout, coreference in the last column)")
    ap.add_argument("response", help="the system's file, same layout; documents matched to the key's by name")
    args = ap.parse_args(argv)
    try:
        print(json.dumps(score_files(args.key, args.response), indent=2))
    except SuiteError as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
