"""The embed command against the way AllenNLP users embed a file, whole process (Peters et al. 2018 §3.2's
features): ``python -m elmo_core.embed`` beside ``benchmarks/conformance/allennlp_embed_file.py`` (a script
around AllenNLP 2.10.1's ``_ElmoBiLm``, file-order batches, the old ``elmo`` command's HDF5 layout), both
reading the same paper-size biLM with random weights in the original format and the same sentences.

    python -m benchmarks.embed_whole_process --allennlp-python .venv-conformance/bin/python [--threads 1 2]

Each process is timed from its start to its exit (start-up, loading, embedding and writing included), on the
long file and on a file of its first sentence; the marginal time (long minus one sentence) leaves start-up and
loading out. The best of ``--repeats`` runs counts; the sides alternate. Prints the table and AllenNLP's
phases (import, load, batches, write), and how far the two files' layers are apart.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from benchmarks.bilm_speed import DEFAULT_CONLL, PAPER_OPTIONS, read_conll_sentences
from elmo_core import BiLM, save_bilm
from elmo_core.options import parse_options

ALLENNLP_SCRIPT = Path(__file__).resolve().parent / "conformance" / "allennlp_embed_file.py"


def timed(command: list[str], threads: int) -> tuple[float, str]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(command[:3])} ... exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, done.stderr


def commands(side: str, python: Path, model: Path, text: Path, out: Path, batch: int, threads: int) -> list[str]:
    """The command line of one side: the suite's embed command, or the AllenNLP user's script under ``python``."""
    if side == "suite":
        embed = [sys.executable, "-m", "elmo_core.embed", "--model", str(model), "--input", str(text)]
        return [*embed, "--output", str(out), "--batch-size", str(batch), "--no-progress"]
    files = [str(model / "options.json"), str(model / "weights.hdf5"), str(text), str(out)]
    return [str(python), str(ALLENNLP_SCRIPT), *files, "--batch-size", str(batch), "--threads", str(threads)]


def layers_apart(a: Path, b: Path, n: int = 5) -> float:
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        return max(float(np.abs(fa[str(i)][()] - fb[str(i)][()]).max()) for i in range(n))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--allennlp-python", type=Path, required=True, help="allennlp 2.10.1's interpreter")
    ap.add_argument("--input", type=Path, default=DEFAULT_CONLL, help="CoNLL file the sentences come from")
    ap.add_argument("--sentences", type=int, default=800, help="sentences in the long file (default 800)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts (default 1 2)")
    ap.add_argument("--batch-size", type=int, default=64, help="both sides' batch size (default 64)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each process; the best counts (default 2)")
    a = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="embed-whole-"))
    sentences = read_conll_sentences(a.input, a.sentences)
    (work / "long.txt").write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    (work / "one.txt").write_text(" ".join(sentences[0]) + "\n", encoding="utf-8")
    tokens = {"long": sum(map(len, sentences)), "one": len(sentences[0])}
    model = work / "model"
    model.mkdir()
    save_bilm(BiLM(parse_options(PAPER_OPTIONS)), model / "options.json", model / "weights.hdf5")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or platform.platform()}")
    print(f"{len(sentences)} sentences, {tokens['long']} tokens from {a.input}; paper-size biLM, random weights")
    rows = []
    for threads in a.threads:
        best, phases = {}, {}
        for repeat in range(a.repeats):
            for side in ("suite", "allennlp") if repeat % 2 == 0 else ("allennlp", "suite"):
                for name in ("long", "one"):
                    out = work / f"{side}_{name}.hdf5"
                    cmd = commands(side, a.allennlp_python, model, work / f"{name}.txt", out, a.batch_size, threads)
                    seconds, stderr = timed(cmd, threads)
                    best[side, name] = min(seconds, best.get((side, name), float("inf")))
                    if side == "allennlp" and name == "long":
                        phases[repeat] = json.loads(stderr.strip().splitlines()[-1])["phases"]
        row = {"threads": threads}
        for side in ("suite", "allennlp"):
            marginal = best[side, "long"] - best[side, "one"]
            row[side] = {
                "whole_s": best[side, "long"],
                "one_sentence_s": best[side, "one"],
                "whole_tok_s": tokens["long"] / best[side, "long"],
                "marginal_tok_s": (tokens["long"] - tokens["one"]) / marginal,
            }
        row["allennlp_phases"] = phases
        row["layers_apart"] = layers_apart(work / "suite_long.hdf5", work / "allennlp_long.hdf5")
        rows.append(row)
        s, r = row["suite"], row["allennlp"]
        print(
            f"threads {threads}: whole process {s['whole_s']:.1f} s vs {r['whole_s']:.1f} s "
            f"({r['whole_s'] / s['whole_s']:.2f}x; {s['whole_tok_s']:.0f} vs {r['whole_tok_s']:.0f} tok/s); "
            f"one sentence {s['one_sentence_s']:.1f} s vs {r['one_sentence_s']:.1f} s; "
            f"marginal {s['marginal_tok_s']:.0f} vs {r['marginal_tok_s']:.0f} tok/s "
            f"({s['marginal_tok_s'] / r['marginal_tok_s']:.2f}x); layers apart {row['layers_apart']:.2e}"
        )
        print(f"  AllenNLP's phases (s): {json.dumps(phases)}")
    print(json.dumps({"tokens": tokens, "batch_size": a.batch_size, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
