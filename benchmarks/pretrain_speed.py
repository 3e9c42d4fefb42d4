"""Training throughput of the biLM (Peters et al. 2018, §3.1): the fast training step against the
plain autograd reference, in the same run, for the embedded ``small`` preset and the paper's
configuration, on this machine.

    python -m benchmarks.pretrain_speed [--steps 5] [--rounds 2] [--configs small paper]

Both implementations train the same freshly initialised model on the same batches of real text
(the LM corpus), from the same seed; each round runs one warm-up update and ``--steps`` timed
updates of each implementation in turn, and the best round is kept. Printed per implementation:
tokens/s, seconds per update, peak resident memory, and the matrix-product FLOPs it actually
executes per second as a fraction of the float32 GEMM peak measured in the same run (before the
timings and again after them, the higher kept: one low reading of the peak would flatter every fraction)
(char CNN over the windows it convolves, highway, projection, the LSTMs' input, recurrent and
projection products, the adaptive softmax's head and tails; forward and backward). Also printed:
the speed-up, and the largest relative difference between the two implementations' losses.

``--profile N`` then profiles N more updates of the fast step on one thread, the directions one after the
other (``torch.profiler``), and prints where the time goes: per part of the update (the character CNN's
forward and backward passes, the LSTMs' forward and backward passes, the softmax, the optimizer and the rest),
the time in matrix products (with their FLOP rate) and in everything else. The profiler adds a few
microseconds to every operation, most of it to the "other" column; the update's time without it is printed
beside it, and so is what running the directions side by side costs in thread time.

The reference is the training step as it was before the fast path: ``LanguageModel.forward``
then ``backward``, with the character CNN convolving all ``max_characters_per_token`` positions
of every token (``CharCNN.padding_shortcut = False``) once per direction.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks import SHARED
from benchmarks.bilm_speed import matmul_peak_flops, peak_rss_mb, reset_peak_rss
from elmo_core.bilm import BiLM
from elmo_core.char_cnn import CharCNN
from elmo_core.options import parse_options
from elmo_core.pretrain import PRESETS
from elmo_core.pretraining.lm_data import LMStream, Vocabulary, expand_files
from elmo_core.pretraining.lm_fast_step import SCOPES, FastTrainingStep, TokenTypes, train_step_plain
from elmo_core.pretraining.lm_training import LanguageModel, detach_state, lm_optimizer
from suite_common.errors import DataError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = SHARED / "data/lm_corpus/train/*.txt"
SHIPPED_VOCAB = ROOT / "elmo_core/pretrained/small/vocab.txt"


def _char_cnn_flops(opts, chars: np.ndarray, shortcut: bool) -> float:
    """Forward FLOPs of the character convolutions over the distinct tokens ``chars`` (N, C):
    the reference convolves every position filter by filter; the training route of the fast
    step takes tokens in chunks sorted by length, each chunk's window starts up to its longest
    token, every filter in one product with the narrower ones zero-padded to the widest, plus
    one padding-only window per chunk that has one (``CharCNN._pool_chunk_all_filters``)."""
    C = chars.shape[1]
    if not shortcut:
        return sum(2.0 * len(chars) * (C - w + 1) * opts.char_dim * w * n for w, n in opts.filters)
    positions = np.arange(1, C + 1)
    widths = np.sort(((chars != 261) * positions).max(axis=1))  # 261: in-token padding id
    widest, narrowest = max(w for w, _ in opts.filters), min(w for w, _ in opts.filters)
    n_filters = sum(n for _, n in opts.filters)
    size = CharCNN.CONV_CHUNK_AUTOGRAD
    total = 0.0
    for start in range(0, len(widths), size):
        rows, span = len(widths[start : start + size]), max(int(widths[start : start + size].max()), 1)
        windows = rows * span + (span + narrowest - 1 < C)
        total += 2.0 * windows * opts.char_dim * widest * n_filters
    return total


def update_flops(lm: LanguageModel, batch, fast: bool) -> float:
    """Matrix-product FLOPs of one update (forward + backward: 3x the forward)."""
    opts, softmax = lm.bilm.opts, lm.softmax
    P, D, F = opts.projection_dim, opts.dim, sum(n for _, n in opts.filters)
    valid = [t[t >= 0] for t in (batch.forward_targets, batch.backward_targets)]
    n_tok = int(batch.lengths.sum())  # positions run through the LSTMs per direction
    streams = [c.reshape(-1, c.shape[-1]) for c in (batch.forward_chars, batch.backward_chars)]
    streams = [s[(s != 0).any(axis=1)] for s in streams]
    if fast:  # the distinct tokens of both streams, in halves on two threads (FastTrainingStep)
        types = TokenTypes(batch, slice(None), "cpu").chars.numpy()
        type_sets = np.array_split(types, 2) if torch.get_num_threads() >= 2 and len(types) > 1 else [types]
    else:
        type_sets = [np.unique(s, axis=0) for s in streams]
    flops = 0.0
    for types in type_sets:
        dense = 2.0 * len(types) * (opts.n_highway * 2 * F * F + (F * P if F != P else 0))
        flops += 3 * (_char_cnn_flops(opts, types, fast) + dense)
    lstm = 2.0 * n_tok * (P * 4 * D + P * 4 * D + D * P) * opts.n_layers * 2
    flops += 3 * lstm
    head_columns = softmax.shortlist_size + softmax.n_clusters
    for targets in valid:
        flops += 3 * 2.0 * len(targets) * P * head_columns
        bounds = [0] + list(softmax.cutoffs)
        for k, tail in enumerate(softmax.tail):
            n = int(((targets >= bounds[k + 1]) & (targets < bounds[k + 2])).sum())
            hidden, out = tail[0].out_features, tail[1].out_features
            flops += 3 * 2.0 * n * (P * hidden + hidden * out)
    return flops


def first_batches(files, vocab: Vocabulary, batch_size: int, n: int) -> list:
    """The stream's first ``n`` batches (seed 0), going on into later epochs of a short text."""
    stream, batches = LMStream(files, vocab, batch_size, 20, seed=0), []
    for epoch in itertools.count():
        before = len(batches)
        batches += itertools.islice(stream.batches(epoch), n - len(batches))
        if len(batches) == n:
            return batches
        if len(batches) == before:
            raise DataError(f"{', '.join(map(str, files))}: no batch of {batch_size} rows x 20 tokens in an epoch")


def fresh_model(preset: str, vocab: Vocabulary, device: str) -> LanguageModel:
    torch.manual_seed(0)
    return LanguageModel(BiLM(parse_options(json.loads(json.dumps(PRESETS[preset])))), len(vocab)).to(device).train()


def measure(preset: str, vocab: Vocabulary, files, batch_size: int, steps: int, rounds: int, device: str) -> dict:
    batches = first_batches(files, vocab, batch_size, steps + 1)
    results = {}

    def run(name: str) -> None:
        lm = fresh_model(preset, vocab, device)
        fast = name == "fast"
        lm.bilm.token_encoder.padding_shortcut = fast
        optimizer = lm_optimizer(lm, 0.2, device)  # pretraining's
        step = FastTrainingStep(lm) if fast else (lambda b, s, sc: train_step_plain(lm, b, s, sc, device=device))
        state = lm.bilm.zero_state(batch_size, device)
        torch.manual_seed(1)
        reset_peak_rss()
        seconds, losses, flops, tokens = 0.0, [], 0.0, 0
        for i, batch in enumerate(batches):
            count = int((batch.forward_targets >= 0).sum())
            start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            nll, state = step(batch, state, 20 / (2 * count)) if fast else step(batch, state, 20 / (2 * count))
            torch.nn.utils.clip_grad_norm_(lm.parameters(), 10.0)
            optimizer.step()
            state = detach_state(state)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            losses.append(float(nll.sum()) / (2 * count))
            if i > 0:  # the first update is warm-up
                seconds += time.perf_counter() - start
                flops += update_flops(lm, batch, fast)
                tokens += count
        r = results.setdefault(name, {"seconds_per_update": float("inf"), "runs_s": []})
        r["runs_s"].append(round(seconds / steps, 3))
        r["losses"] = losses
        r["peak_rss_mb"] = max(r.get("peak_rss_mb", 0.0), peak_rss_mb())
        if seconds / steps < r["seconds_per_update"]:
            r.update(
                seconds_per_update=seconds / steps,
                tokens_per_s=tokens / seconds,
                flops_per_s=flops / seconds,
                gflop_per_update=flops / steps / 1e9,
            )
        r["parameters"] = sum(p.numel() for p in lm.parameters())

    for _ in range(rounds):
        for name in ("reference", "fast"):
            run(name)
    ref, fast = np.array(results["reference"]["losses"]), np.array(results["fast"]["losses"])
    return {
        "preset": preset,
        "batch_size": batch_size,
        "unroll_steps": 20,
        "steps": steps,
        "speedup": results["fast"]["tokens_per_s"] / results["reference"]["tokens_per_s"],
        "max_relative_loss_difference": float(np.max(np.abs(fast - ref) / np.abs(ref))),
        **{name: {k: v for k, v in r.items() if k != "losses"} for name, r in results.items()},
    }


PRODUCTS = {"aten::mm", "aten::addmm", "aten::addmm_", "aten::bmm", "aten::addmv", "aten::addmv_", "aten::mv"}
PARTS = {
    "char CNN forward": "char CNN forward",
    "char CNN backward": "char CNN backward",
    "ProjectedLSTMFunction": "LSTMs forward",
    "ProjectedLSTMFunctionBackward": "LSTMs backward",
    "softmax": "softmax (head and tails)",
    "optimizer": "clip and optimizer",
}
assert set(SCOPES) <= set(PARTS), "a scope of the fast step has no part here"


def _product_flops(name: str, shapes: list) -> float:
    """2 m k n of a matrix product (or 2 m k of a matrix-vector one) from the profiler's input shapes."""
    if name in ("aten::mm", "aten::bmm"):
        return 2.0 * np.prod(shapes[0]) * shapes[1][-1]
    if name in ("aten::addmm", "aten::addmm_"):
        return 2.0 * np.prod(shapes[1]) * shapes[2][-1]
    return 2.0 * np.prod(shapes[1]) if name in ("aten::addmv", "aten::addmv_") else 2.0 * np.prod(shapes[0])


def profile_fast_step(preset: str, vocab: Vocabulary, files, batch_size: int, updates: int) -> dict:
    """Seconds per update at one thread without the profiler, and per part of the update the profiler's self
    time in matrix products, their FLOPs, and its self time in everything else (all per update)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    batches = first_batches(files, vocab, batch_size, 2 * updates + 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        lm = fresh_model(preset, vocab, "cpu")
        optimizer, step = lm_optimizer(lm, 0.2, "cpu"), FastTrainingStep(lm, side_by_side=False)
        state = lm.bilm.zero_state(batch_size, "cpu")

        def update(batch):
            nonlocal state
            count = int((batch.forward_targets >= 0).sum())
            optimizer.zero_grad(set_to_none=True)
            _, state = step(batch, state, 20 / (2 * count))
            with record_function("optimizer"):
                torch.nn.utils.clip_grad_norm_(lm.parameters(), 10.0)
                optimizer.step()
            state = detach_state(state)

        update(batches[0])  # warm-up
        start = time.perf_counter()
        for batch in batches[1 : updates + 1]:
            update(batch)
        seconds = (time.perf_counter() - start) / updates
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for batch in batches[updates + 1 :]:
                update(batch)
    finally:
        torch.set_num_threads(threads)
    parts = {name: {"products_s": 0.0, "flops": 0.0, "other_s": 0.0} for name in [*PARTS.values(), "rest"]}
    for event in prof.events():
        scope = event
        while scope is not None and scope.name not in PARTS:
            scope = scope.cpu_parent
        part = parts[PARTS[scope.name] if scope is not None else "rest"]
        if event.name in PRODUCTS:
            part["products_s"] += event.self_cpu_time_total / 1e6 / updates
            part["flops"] += _product_flops(event.name, event.input_shapes) / updates
        else:
            part["other_s"] += event.self_cpu_time_total / 1e6 / updates
    return {"seconds_per_update": seconds, "parts": parts}


def print_profile(profiled: dict, two_threads_s: float, updates: int) -> None:
    parts = profiled["parts"]
    total = sum(p["products_s"] + p["other_s"] for p in parts.values())
    print(f"\nwhere the fast step's time goes: {updates} updates, one thread, the directions one after the other")
    print(f"{'part of the update':<26}{'products ms':>12}{'GFLOP/s':>9}{'other ms':>10}{'share':>7}")
    for name, p in parts.items():
        rate = f"{p['flops'] / p['products_s'] / 1e9:.0f}" if p["products_s"] else "-"
        share = (p["products_s"] + p["other_s"]) / total
        print(f"{name:<26}{1e3 * p['products_s']:>12.1f}{rate:>9}{1e3 * p['other_s']:>10.1f}{100 * share:>6.1f}%")
    products = sum(p["products_s"] for p in parts.values())
    print(
        f"{'all':<26}{1e3 * products:>12.1f}{sum(p['flops'] for p in parts.values()) / products / 1e9:>9.0f}"
        f"{1e3 * (total - products):>10.1f}  (profiled: {total:.3f} s/update)"
    )
    one = profiled["seconds_per_update"]
    print(
        f"without the profiler: {one:.3f} s/update on one thread; {two_threads_s:.3f} on two threads side by side, "
        f"whose {2 * two_threads_s:.3f} thread-seconds are {2 * two_threads_s - one:+.3f} s more than one thread's"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5, help="timed updates per round (after one warm-up update)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of both implementations in turn; best kept")
    ap.add_argument(
        "--configs",
        nargs="+",
        choices=("small", "paper"),
        default=["small", "paper"],
        help="biLM configurations to time",
    )
    ap.add_argument("--small-batch", type=int, default=128, help="rows per update for the small preset")
    ap.add_argument("--paper-batch", type=int, default=32, help="rows per update for the paper config")
    ap.add_argument("--corpus", default=str(CORPUS), help="training text (files or a glob)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--json", type=Path, help="also write the measurements here")
    ap.add_argument(
        "--peak-seconds",
        type=float,
        default=3.0,
        help="seconds of the float32 matmul run that measures the machine's peak (default 3)",
    )
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="then profile N fast updates (see above)")
    args = ap.parse_args(argv)
    if args.profile < 0 or (args.profile and args.device != "cpu"):
        ap.error("--profile takes a number of updates, and profiles the step on the CPU (--device cpu)")
    try:
        benchmark(args)
    except DataError as e:
        raise SystemExit(f"error: {e}") from None


def benchmark(args) -> None:
    files = expand_files([args.corpus])
    if SHIPPED_VOCAB.exists():
        vocab, source = Vocabulary.load(SHIPPED_VOCAB), str(SHIPPED_VOCAB)
    else:
        vocab, source = Vocabulary.build(files, 3), f"built from {args.corpus}"
    peaks = [matmul_peak_flops(args.peak_seconds)]
    print(
        f"machine: {platform.machine()}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"device {args.device}; vocabulary {len(vocab)} words ({source})"
    )
    batches = {preset: args.small_batch if preset == "small" else args.paper_batch for preset in args.configs}
    report = [
        measure(preset, vocab, files, batch, args.steps, args.rounds, args.device) for preset, batch in batches.items()
    ]
    peaks.append(matmul_peak_flops(args.peak_seconds))
    peak = max(peaks)
    print(
        f"matmul peak (float32, measured): {peak / 1e9:.1f} GFLOP/s "
        f"(before the timings {peaks[0] / 1e9:.1f}, after them {peaks[1] / 1e9:.1f})"
    )
    for r in report:
        for name in ("reference", "fast"):
            r[name]["peak_fraction"] = r[name]["flops_per_s"] / peak
        preset, batch = r["preset"], r["batch_size"]
        print(f"\n{preset}: {r['fast']['parameters'] / 1e6:.1f}M parameters, {batch} rows x 20 tokens")
        print(
            f"{'implementation':<16}{'tokens/s':>10}{'s/update':>10}{'GFLOP/update':>14}{'of peak':>9}"
            f"{'peak RSS MB':>13}   all rounds (s/update)"
        )
        for name in ("reference", "fast"):
            m = r[name]
            print(
                f"{name:<16}{m['tokens_per_s']:>10.0f}{m['seconds_per_update']:>10.3f}{m['gflop_per_update']:>14.1f}"
                f"{100 * m['peak_fraction']:>8.1f}%{m['peak_rss_mb']:>13.0f}   "
                f"{', '.join(f'{x:.3f}' for x in m['runs_s'])}"
            )
        print(
            f"speed-up: {r['speedup']:.2f}x; largest relative loss difference over {args.steps + 1} updates: "
            f"{r['max_relative_loss_difference']:.2e}"
        )
        if args.profile:
            r["profile"] = profile_fast_step(preset, vocab, files, batch, args.profile)
            print_profile(r["profile"], r["fast"]["seconds_per_update"], args.profile)
    if args.json:
        document = {"matmul_peak_flops": peak, "matmul_peak_flops_before_and_after": peaks, "configs": report}
        args.json.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
