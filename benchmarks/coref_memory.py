"""Peak memory of scoring the longest LitBank document with the coreference head (Lee et al. 2017, the
paper's §4 coreference task): the antecedent pairs built a block of spans at a time (the suite's way)
against all at once, each in a process of its own.

    python -m benchmarks.coref_memory [--profile quick|paper] [--elmo-position input]

The document is the longest of ``coref_litbank/{train,dev}.conll`` (by words), written alone to a
scratch file; the model is a new one at the profile's settings (its weights do not change the memory),
fed the embedded biLM's layers at its input. Printed per way: the document's words, kept spans,
antecedents per span, and the process's peak resident memory (``ru_maxrss``) after scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import SHARED
from experiments.run_config import as_run

ROOT = Path(__file__).resolve().parents[1]


def longest_document(out: Path) -> tuple[str, int]:
    """The longest document's lines, written to ``out``: (its name, its words)."""
    best: tuple[int, str, list[str]] = (0, "", [])
    for split in ("train", "dev"):
        doc: list[str] = []
        for line in (SHARED / "data/coref_litbank" / f"{split}.conll").read_text(encoding="utf-8").splitlines():
            doc.append(line)
            if line.startswith("#end document"):
                words = sum(1 for x in doc if x.strip() and not x.startswith("#"))
                if words > best[0]:
                    begin = next((x for x in doc if x.startswith("#begin document")), "")
                    best = (words, begin.removeprefix("#begin document").strip(), doc)
                doc = []
    out.write_text("\n".join(best[2]) + "\n", encoding="utf-8")
    return best[1], best[0]


def score_once(document: Path, profile: str, position: str, whole: bool, work: Path) -> dict:
    """Score ``document`` in this process; its peak memory."""
    import torch

    from experiments.config_store import compose
    from experiments.pipeline import build_run
    from experiments.plan import RunPlan
    from tasks.coref.model import CorefModel

    torch.set_num_threads(1)
    if whole:
        CorefModel.PAIR_FLOATS = 1 << 62  # every pair at once
    cfg = compose([
        "task=coref", "source=local", f"profile={profile}", f"elmo.position={position}",
        f"data.train_path={document}", f"data.dev_path={document}", f"cache.dir={work / 'cache'}",
        f"runs_root={work / 'runs'}", "threads=1",
    ])  # fmt: skip
    built = build_run(RunPlan.resolve(as_run(cfg)), layers=True)
    model = built.model.eval()
    batch = built.task.make_batch(built.data["dev"], [0])
    with torch.no_grad():
        scores = model(batch).scores
    return {
        "kept_spans": int(scores["starts"].shape[0]),
        "antecedents": int(scores["antecedents"].shape[1]),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9, 2),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.coref_memory", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--profile", default="paper", choices=("quick", "paper"), help="the model's settings (default paper)"
    )
    ap.add_argument(
        "--elmo-position",
        default="input",
        choices=("none", "input", "output", "both"),
        help="where the biLM's layers go (default input, as coreference's ELMo runs)",
    )
    ap.add_argument("--one", choices=("blocks", "whole"), help=argparse.SUPPRESS)  # a child process's part
    ap.add_argument("--document", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(score_once(args.document, args.profile, args.elmo_position, args.one == "whole", args.work)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        name, words = longest_document(work / "longest.conll")
        print(f"machine: {platform.machine()}, python {platform.python_version()}; document {name!r}: {words} words")
        print(f"profile {args.profile}, ELMo at {args.elmo_position}")
        for way in ("blocks", "whole"):
            done = subprocess.run(
                [sys.executable, "-m", "benchmarks.coref_memory", "--one", way, "--document",
                 str(work / "longest.conll"), "--work", str(work), "--profile", args.profile,
                 "--elmo-position", args.elmo_position],
                cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
            )  # fmt: skip
            if done.returncode:
                why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
                print(f"{way}: failed ({why})")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{way:7s} {r['kept_spans']} kept spans x {r['antecedents']} antecedents: "
                f"peak resident memory {r['peak_rss_gb']} GB"
            )


if __name__ == "__main__":
    main()
