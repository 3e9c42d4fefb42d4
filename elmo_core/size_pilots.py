"""Choose the biLM's size by measurement at the final budget (Peters et al. 2018, §3.1: the biLM's
size is the main lever on the representation; here it is bounded by the time to train it).

    python -m elmo_core.size_pilots --cells 512 1024 2048 --pilot-minutes 1.5 --total-minutes 6 \\
        --out DIR --train 'corpus/*.txt' --heldout heldout.txt [any other elmo_core.pretrain option]

1. **Pilots.** For each LSTM size in ``--cells`` (everything else from ``--preset`` and the
   other options), a new biLM is trained for ``--pilot-minutes`` of wall-clock time — equal time,
   not equal tokens, since a larger model reads less text in the same time — and exported with
   its held-out perplexity (``DIR/cells-N``). Every pilot reads the same vocabulary: ``--vocab``, or
   else ``DIR/vocab.txt``, built once from all of ``--train`` (words seen ``--min-count`` times).
2. **Extrapolation.** Each pilot's training loss against the tokens it read is fitted by
   ``L(n) = a + b n^-c`` (``a, b >= 0``; least squares over a grid of ``c``, on bin means of the last
   80 % of the pilot) and read at the tokens the size would read in ``--total-minutes``: its rate
   times that time. The rate is the pilot's own, or with ``--rate-minutes`` each size's rate timed
   apart afterwards (a pilot that shared the machine with other work reads less per second than
   the long run will, but its loss per token is unchanged). The lowest predicted loss is chosen.
3. **The long run** resumes the chosen pilot from its checkpoint (``elmo_core.pretrain``'s exact
   resume) until its training time reaches ``--total-minutes`` (or ``--deadline-minutes`` since
   this command started, less the time its export took in the pilot), then exports it.

``DIR/pilots.json`` and ``DIR/pilots.md`` hold every pilot's size, tokens/s, loss, held-out
perplexity and fitted curve, the choice, and the long run's summary. Sizes whose
``weights.hdf5`` would exceed ``--max-weights-mb`` are refused before anything trains.
Rerunning the same command reuses finished pilots and resumes the long run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from suite_common.errors import ConfigError

from .bilm import BiLM
from .options import parse_options
from .pretrain import PRESETS, build_parser, train
from .pretraining.lm_checkpoint import CheckpointError
from .pretraining.lm_data import Vocabulary, expand_files
from .pretraining.lm_training import LanguageModel


def fit_learning_curve(seconds: np.ndarray, losses: np.ndarray, bins: int = 24) -> dict:
    """``L(t) = a + b t^-c`` fitted to the bin means of ``losses`` over the last 80 % of ``seconds``
    (any measure of progress: seconds, tokens): ``{"a", "b", "c", "rmse"}``. ``b >= 0`` (a curve
    that falls or stays flat) and ``a >= 0`` (the loss's floor)."""
    keep = seconds >= 0.2 * seconds.max()
    t, y = seconds[keep], losses[keep]
    if len(t) < 3:
        raise ValueError(f"a learning curve needs at least 3 points past 20 % of its time, got {len(t)}")
    edges = np.linspace(t.min(), t.max(), min(bins, len(t)) + 1)
    which = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, len(edges) - 2)
    tb = np.array([t[which == k].mean() for k in range(len(edges) - 1) if (which == k).any()])
    yb = np.array([y[which == k].mean() for k in range(len(edges) - 1) if (which == k).any()])
    best = None
    for c in np.linspace(0.02, 2.0, 100):
        x = tb**-c
        design = np.stack([np.ones_like(x), x], axis=1)
        (a, b), *_ = np.linalg.lstsq(design, yb, rcond=None)
        if b < 0:
            a, b = float(yb.mean()), 0.0
        if a < 0:  # a loss has no negative asymptote
            continue
        sse = float(((a + b * x - yb) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, float(a), float(b), float(c))
    if best is None:
        raise ValueError("no learning curve a + b t^-c with a >= 0 fits these losses")
    sse, a, b, c = best
    return {"a": a, "b": b, "c": c, "rmse": math.sqrt(sse / len(tb))}


def predicted_loss(fit: dict, seconds: float) -> float:
    return fit["a"] + fit["b"] * seconds ** -fit["c"]


def model_size(options: dict, vocab_size: int) -> dict:
    """Parameters of the biLM and its softmax, and ``weights.hdf5``'s size in MB (float32)."""
    lm = LanguageModel(BiLM(parse_options(options, "size_pilots")), vocab_size)
    bilm = sum(p.numel() for p in lm.bilm.parameters())
    softmax = sum(p.numel() for p in lm.softmax.parameters())
    return {"parameters_bilm": bilm, "parameters_softmax": softmax, "weights_mb": round(4 * (bilm + softmax) / 1e6, 3)}


def pilot_curve(run_dir: Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """(tokens read, loss) per update of a pilot, and its summary as the pilot ended. Tokens are
    spread evenly over the updates (every update reads the same rows x unroll_steps, the last of
    an epoch aside)."""
    summary = json.loads((run_dir / "pilot_summary.json").read_text())
    lines = [json.loads(line) for line in (run_dir / "train_log.jsonl").read_text().splitlines()]
    steps = summary["progress"]["step"]
    losses = np.array([line["loss"] for line in lines[:steps]])  # the long run continues the chosen pilot's log
    if len(losses) != steps:
        raise CheckpointError(f"{run_dir}/train_log.jsonl has {len(losses)} updates, summary.json says {steps}")
    tokens = summary["progress"]["tokens"] * np.arange(1, steps + 1) / steps
    return tokens, losses, summary


def measure_rate(rest: list[str], out: Path, cells: int, minutes: float) -> float:
    """Tokens per second of a new model of ``cells`` trained for ``minutes`` in ``out`` (scratch):
    the rate of the size on a machine doing nothing else, apart from any disturbance of the pilot."""
    args = _pretrain_args([*rest, "--max-steps", "1000000"], out, cells, minutes)
    args.heldout = None  # no perplexity: only the rate
    progress = train(args)["progress"]
    return progress["tokens"] / progress["seconds"]


def build_size_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m elmo_core.size_pilots",
        description=__doc__.split("\n\n")[0],
        epilog="Every other option goes to each training run, as python -m elmo_core.pretrain takes it "
        "(--out and --lstm-dim are set per pilot):\n\n" + build_parser().format_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--cells", type=int, nargs="+", required=True, help="LSTM sizes to try (cells per layer)")
    ap.add_argument("--out", type=Path, required=True, help="directory of the pilots (cells-N/) and the report")
    ap.add_argument("--pilot-minutes", type=float, required=True, help="training time of each pilot")
    ap.add_argument("--total-minutes", type=float, required=True, help="training time of the chosen model in all")
    ap.add_argument("--deadline-minutes", type=float, help="end the long run before this long after the start")
    ap.add_argument("--max-weights-mb", type=float, default=60.0, help="refuse larger sizes (default 60)")
    ap.add_argument(
        "--rate-minutes",
        type=float,
        help="after the pilots, time each size alone for this long (a scratch run) and extrapolate with that "
        "rate (default: each pilot's own rate)",
    )
    return ap


def _pretrain_args(rest: list[str], out: Path, cells: int, minutes: float):
    args = build_parser().parse_args([*rest, "--out", str(out), "--lstm-dim", str(cells)])
    args.max_minutes, args.no_progress = minutes, True
    if "--epochs" not in rest:
        args.epochs = 1000  # the time limit ends the run
    return args


def run(args: argparse.Namespace, rest: list[str]) -> dict:
    started = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    probe = build_parser().parse_args([*rest, "--out", str(args.out)])
    if probe.init_from or probe.options:
        raise ConfigError(
            "size pilots train new models: give --preset (and --projection-dim), not --init-from/--options"
        )
    if not probe.vocab:  # one vocabulary for every pilot, built once from all the training text
        probe.vocab = args.out / "vocab.txt"
        if not probe.vocab.exists():
            print(f"vocabulary: words seen at least {probe.min_count} times in --train", file=sys.stderr, flush=True)
            Vocabulary.build(expand_files(probe.train), probe.min_count).save(probe.vocab)
        rest = [*rest, "--vocab", str(probe.vocab)]
    vocab_size = len(Vocabulary.load(probe.vocab))
    report = {"pilot_minutes": args.pilot_minutes, "total_minutes": args.total_minutes, "pilots": []}
    sizes = {}
    for cells in args.cells:
        options = json.loads(json.dumps(PRESETS[probe.preset]))
        options["lstm"]["dim"] = cells
        if probe.projection_dim:
            options["lstm"]["projection_dim"] = probe.projection_dim
        sizes[cells] = model_size(options, vocab_size)
        if sizes[cells]["weights_mb"] > args.max_weights_mb:
            raise ConfigError(
                f"--cells {cells}: weights.hdf5 would be {sizes[cells]['weights_mb']} MB, over --max-weights-mb "
                f"{args.max_weights_mb}"
            )
    total_seconds = 60 * args.total_minutes
    for cells in args.cells:
        run_dir = args.out / f"cells-{cells}"
        if not (run_dir / "pilot_summary.json").exists():
            print(f"pilot: {cells} cells, {args.pilot_minutes} min", file=sys.stderr, flush=True)
            t0 = time.time()
            summary = train(_pretrain_args(rest, run_dir, cells, args.pilot_minutes))
            summary["overhead_seconds"] = round(time.time() - t0 - summary["progress"]["seconds"], 1)
            (run_dir / "pilot_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    rates = {}
    if args.rate_minutes:  # each size's rate alone on the machine, as the long run will have it
        for cells in args.cells:
            rate_file = args.out / f"rate-{cells}.json"
            if not rate_file.exists():
                print(f"rate: {cells} cells, {args.rate_minutes} min", file=sys.stderr, flush=True)
                rate = measure_rate(rest, args.out / f"rate-{cells}", cells, args.rate_minutes)
                rate_file.write_text(json.dumps({"tokens_per_second": rate}) + "\n")
            rates[cells] = json.loads(rate_file.read_text())["tokens_per_second"]
    for cells in args.cells:
        report["pilots"].append(
            pilot_row(args.out / f"cells-{cells}", cells, sizes[cells], rates.get(cells), total_seconds)
        )
        _write(args.out, report)
    chosen = min(report["pilots"], key=lambda p: p["predicted_loss_at_total"])
    report["chosen_cells"] = chosen["cells"]
    _write(args.out, report)
    run_dir = args.out / f"cells-{chosen['cells']}"
    done = json.loads((run_dir / "summary.json").read_text())["progress"]["seconds"]
    minutes = (total_seconds - done) / 60
    if args.deadline_minutes is not None:  # room for loading and export as long as the pilot's took
        overhead = json.loads((run_dir / "pilot_summary.json").read_text())["overhead_seconds"]
        minutes = min(minutes, args.deadline_minutes - (time.time() - started) / 60 - 1.5 * overhead / 60)
    if minutes > 0.05:
        print(f"long run: {chosen['cells']} cells, {minutes:.1f} more min", file=sys.stderr, flush=True)
        final = train(_pretrain_args(rest, run_dir, chosen["cells"], minutes))
        report["long_run"] = {
            "dir": str(run_dir),
            "progress": final["progress"],
            "tokens_per_second": round(final["progress"]["tokens"] / final["progress"]["seconds"]),
            "heldout_stateful": final["heldout_perplexity"]["average"],
            "heldout_stateless": final["heldout_perplexity_stateless"]["average"],
        }
    _write(args.out, report)
    return report


def pilot_row(run_dir: Path, cells: int, size: dict, rate: float | None, total_seconds: float) -> dict:
    """A pilot's line of the report: its loss against the tokens it read, fitted and read at the tokens
    the long run would read (its rate, measured apart when ``rate`` is given, times the total time)."""
    tokens, losses, summary = pilot_curve(run_dir)
    fit = fit_learning_curve(tokens, losses)
    progress = summary["progress"]
    own_rate = progress["tokens"] / progress["seconds"]
    at_total = (rate or own_rate) * total_seconds
    tail = losses[-max(1, len(losses) // 10) :]
    return {
        "cells": cells,
        **size,
        "updates": progress["step"],
        "tokens": progress["tokens"],
        "seconds": round(progress["seconds"], 1),
        "tokens_per_second": round(own_rate),
        "tokens_per_second_alone": round(rate) if rate else None,
        "train_loss_last_10pct": round(float(tail.mean()), 4),
        "heldout_stateful": summary["heldout_perplexity"]["average"],
        "heldout_stateless": summary["heldout_perplexity_stateless"]["average"],
        "fit": fit,
        "tokens_at_total": round(at_total),
        "predicted_loss_at_total": round(predicted_loss(fit, at_total), 4),
        "predicted_perplexity_at_total": round(math.exp(predicted_loss(fit, at_total)), 1),
    }


def _write(out: Path, report: dict) -> None:
    (out / "pilots.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "pilots.md").write_text(render(report))


def render(report: dict) -> str:
    total = report["total_minutes"]
    lines = [
        f"Pilots of {report['pilot_minutes']} min each, extrapolated to {total} min of training.",
        "",
        "| LSTM cells | biLM parameters | weights MB | updates | tokens | tokens/s (pilot; alone) "
        "| train loss (last 10 %) | held-out ppl stateful | stateless | fit a + b n^-c (n: tokens) "
        "| tokens at the total | predicted ppl at the total |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in report["pilots"]:
        f = p["fit"]
        alone = f"{p['tokens_per_second_alone']:,}" if p.get("tokens_per_second_alone") else "-"
        lines.append(
            f"| {p['cells']} | {p['parameters_bilm']:,} | {p['weights_mb']:.1f} | {p['updates']:,} | {p['tokens']:,} "
            f"| {p['tokens_per_second']:,}; {alone} | {p['train_loss_last_10pct']:.3f} | {p['heldout_stateful']:.1f} "
            f"| {p['heldout_stateless']:.1f} | {f['a']:.3f} + {f['b']:.3g} n^-{f['c']:.2f} "
            f"| {p['tokens_at_total']:,} | {p['predicted_perplexity_at_total']} |"
        )
    if "chosen_cells" in report:
        lines += ["", f"Chosen: {report['chosen_cells']} cells (lowest predicted loss at {total} min)."]
    if "long_run" in report:
        r = report["long_run"]
        lines.append(
            f"Long run: {r['progress']['tokens']:,} tokens in {r['progress']['seconds'] / 60:.1f} min "
            f"({r['tokens_per_second']:,} tokens/s), held-out perplexity {r['heldout_stateful']:.1f} stateful, "
            f"{r['heldout_stateless']:.1f} stateless."
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    args, rest = build_size_parser().parse_known_args(argv)
    try:
        report = run(args, rest)
    except (ConfigError, CheckpointError, ValueError, OSError) as e:
        raise SystemExit(f"error: {e}") from None
    print(render(report))


if __name__ == "__main__":
    main()
