"""Does the CUDA path give the CPU's numbers? The biLM of §3 (embedding, Peters et al. 2018 §3.1-3.2)
and its pretraining step (§3.4), run on both devices in one process from the same weights and data.

    python -m benchmarks.cuda_check [--sentences 400] [--steps 30] [--conll PATH] [--corpus PATH]
        [--device cuda] [--out results/cuda_check.json] [--markdown results/cuda_check.md]
    python -m benchmarks.cuda_check --render results/cuda_check.json --markdown results/cuda_check.md

* **embed**: the embedded small biLM (``elmo_core/pretrained/small``) and a paper-size biLM with random
  weights (saved and loaded in the original format) embed the same CoNLL-2003 dev sentences with
  ``embed_sentences`` on the CPU and on ``--device``; per biLM layer, the largest absolute difference,
  and that difference over the layer's largest absolute value. On the GPU in full float32 (TF32 off),
  at PyTorch's defaults (TF32 in cuDNN's convolutions only: the suite's CUDA path) and with
  TF32 allowed everywhere.
* **pretrain**: ``python -m elmo_core.pretrain`` for ``--steps`` updates of the small preset, dropout 0,
  from seed 0 on a slice of the LM corpus, once per device and training step (``fast``, ``plain``), at
  PyTorch's defaults; the per-step training loss of each against the CPU's ``plain`` step.

Prints a table and writes the figures as JSON. Needs a CUDA device; CI never runs it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from benchmarks import SHARED
from benchmarks.bilm_speed import DEFAULT_CONLL, PAPER_OPTIONS, read_conll_sentences
from elmo_core import BiLM, load_bilm, save_bilm
from elmo_core.embed import embed_sentences
from elmo_core.options import parse_options
from suite_common.errors import ConfigError
from suite_common.machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "elmo_core" / "pretrained" / "small"
DEFAULT_CORPUS = SHARED / "data/lm_corpus/train/brown.txt"


@contextmanager
def tf32(matmul: bool, convolution: bool):
    """TF32 allowed or not in matrix products and in cuDNN's convolutions (the character CNN)."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, convolution
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


# PyTorch's defaults, which the suite keeps: TF32 in cuDNN's convolutions, not in matrix products
PRECISIONS = {"float32": (False, False), "default": (False, True), "tf32": (True, True)}


def embed_all(options: Path, weights: Path, sentences: list[list[str]], device: str) -> list[np.ndarray]:
    bilm = load_bilm(options, weights, device=device)
    out = [None] * len(sentences)
    for i, layers in embed_sentences(bilm, sentences, batch_size=64, progress=False):
        out[i] = layers
    return out


def layer_differences(a: list[np.ndarray], b: list[np.ndarray]) -> list[dict]:
    """Per biLM layer: the largest |a - b| over all words, and it over the largest |a|."""
    rows = []
    for layer in range(a[0].shape[0]):
        x = np.concatenate([s[layer] for s in a])
        y = np.concatenate([s[layer] for s in b])
        diff = float(np.abs(x - y).max())
        rows.append({"layer": layer, "max_abs_diff": diff, "relative": diff / float(np.abs(x).max())})
    return rows


def check_embed(name: str, options: Path, weights: Path, sentences, device: str) -> dict:
    cpu = embed_all(options, weights, sentences, "cpu")
    result = {}
    for label, flags in PRECISIONS.items():
        with tf32(*flags):
            result[label] = layer_differences(cpu, embed_all(options, weights, sentences, device))
    print(f"embed, {name} biLM, {len(sentences)} sentences:")
    for label, rows in result.items():
        cells = ", ".join(f"layer {r['layer']} {r['max_abs_diff']:.2e} ({r['relative']:.1e})" for r in rows)
        print(f"  {device} {label}: {cells}")
    return result


def pretrain_losses(corpus: Path, device: str, step: str, steps: int, work: Path) -> list[float]:
    out = work / f"pretrain_{device.replace(':', '')}_{step}"
    command = [
        sys.executable, "-m", "elmo_core.pretrain", "--train", str(corpus), "--out", str(out),
        "--vocab", str(SMALL / "vocab.txt"), "--preset", "small", "--max-steps", str(steps), "--dropout", "0",
        "--batch-size", "32", "--seed", "0", "--device", device, "--train-step", step, "--no-progress",
    ]  # fmt: skip
    subprocess.run(command, check=True, cwd=ROOT)
    return [json.loads(line)["loss"] for line in (out / "train_log.jsonl").read_text().splitlines()]


def check_pretrain(corpus: Path, device: str, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            (d, s): pretrain_losses(corpus, d, s, steps, Path(tmp))
            for d in dict.fromkeys(("cpu", device))
            for s in ("plain", "fast")
        }
    base = np.array(runs["cpu", "plain"])
    result = {}
    print(f"pretrain, small preset, {steps} updates, dropout 0 (loss against the CPU's plain step):")
    for (d, s), losses in runs.items():
        diff = np.abs(np.array(losses) - base)
        within = int(np.argmax(diff > 1e-3)) if (diff > 1e-3).any() else len(diff)  # steps before the first over 1e-3
        result[f"{d} {s}"] = {
            "losses": losses,
            "max_abs_diff": float(diff.max()),
            "steps_within_1e-3": within,
            "last": losses[-1],
        }
        print(
            f"  {d} {s}: first {losses[0]:.5f}, last {losses[-1]:.5f}, largest step difference {diff.max():.2e}, "
            f"the first {within} steps within 1e-3"
        )
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400, help="CoNLL-2003 dev sentences to embed")
    ap.add_argument("--steps", type=int, default=30, help="pretraining updates per run")
    ap.add_argument("--conll", type=Path, default=DEFAULT_CONLL, help="CoNLL-2003 file to take sentences from")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="LM training text for the pretraining runs")
    ap.add_argument("--device", default="cuda", help="the device checked against the CPU")
    ap.add_argument("--out", type=Path, help="where the figures go (JSON)")
    ap.add_argument("--markdown", type=Path, help="where the page goes (Markdown)")
    ap.add_argument("--render", type=Path, help="no check: write --markdown from this saved JSON")
    args = ap.parse_args(argv)
    if args.render:
        page = render(json.loads(args.render.read_text()))
        args.markdown.write_text(page) if args.markdown else print(page)
        return 0
    try:
        if args.device.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError("no CUDA device here: this check compares the CUDA path with the CPU's")
        for path in (args.conll, args.corpus):
            if not path.is_file():
                raise ConfigError(f"{path}: no such file")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sentences = read_conll_sentences(args.conll, args.sentences)
    report = {
        "command": "python -m benchmarks.cuda_check " + " ".join(argv if argv is not None else sys.argv[1:]),
        "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device,
        "cpu": f"{cpu_model()}, {os.cpu_count()} CPUs",
        "torch": f"{torch.__version__} (CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()})",
        "dates": [now()],
    }
    report["embed_small"] = check_embed(
        "small (embedded)", SMALL / "options.json", SMALL / "weights.hdf5", sentences, args.device
    )
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        save_bilm(BiLM(parse_options(PAPER_OPTIONS)), Path(tmp) / "options.json", Path(tmp) / "weights.hdf5")
        report["embed_paper_size"] = check_embed(
            "paper-size (random weights)",
            Path(tmp) / "options.json",
            Path(tmp) / "weights.hdf5",
            sentences[:200],
            args.device,
        )
    report["pretrain"] = check_pretrain(args.corpus, args.device, args.steps)
    report["dates"].append(now())
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(render(report))
    return 0


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def render(report: dict) -> str:
    """The figures of a saved check as a Markdown page."""
    lines = [
        "# The CUDA path against the CPU",
        "",
        "The same biLM weights and sentences embedded on both devices in one process, and the same pretraining run",
        "on each (`benchmarks/cuda_check.py`). Embed: per biLM layer, the largest absolute difference from the",
        "CPU over every word and, in brackets, that over the layer's largest absolute value. `float32`: TF32 off;",
        "`default`: PyTorch's defaults, which the suite keeps (TF32 in cuDNN's convolutions only); `tf32`: TF32",
        "in matrix products too.",
        "",
        "| biLM | GPU precision | layer 0 | layer 1 | layer 2 |",
        "|---|---|---|---|---|",
    ]
    for key, name in (("embed_small", "small (embedded)"), ("embed_paper_size", "paper size, random weights")):
        for precision, rows in report[key].items():
            cells = " | ".join(f"{r['max_abs_diff']:.1e} ({r['relative']:.1e})" for r in rows)
            lines.append(f"| {name} | {precision} | {cells} |")
    pretrain = report["pretrain"]
    steps = len(next(iter(pretrain.values()))["losses"])
    lines += [
        "",
        f"Pretraining: {steps} updates of the small preset, dropout 0, seed 0, at PyTorch's defaults; each run's",
        "training loss per update against the CPU's `plain` step.",
        "",
        "| run | first loss | last loss | largest difference | updates within 1e-3 |",
        "|---|---|---|---|---|",
    ]
    for name, run in pretrain.items():
        lines.append(
            f"| {name} | {run['losses'][0]:.5f} | {run['last']:.5f} | {run['max_abs_diff']:.1e} | "
            f"{run['steps_within_1e-3']} of {steps} |"
        )
    lines += [
        "",
        f"Command: `{report['command']}`. Hardware: {report['device']} with {report['cpu']}; torch {report['torch']}.",
        f"Dates (UTC): {' to '.join(report['dates'])}.",
        *([f"Note: {report['note']}."] if report.get("note") else []),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
