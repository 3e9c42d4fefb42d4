"""Speed of the biLM embed path on the paper-size model, against a plain reference implementation.

    python -m benchmarks.bilm_speed [--sentences 400] [--batch-size 64] [--repeats 2] [--conll PATH]
        [--threads N] [--allennlp-python .venv-conformance/bin/python]

Builds the paper's biLM (filters [[1,32],[2,32],[3,64],[4,128],[5,256],[6,512],[7,1024]],
2 highway, 4096 cells, 512 projection, residual; Peters et al. 2018 §3.4) with random weights,
saves it in the original format and loads it back, then embeds real sentences (CoNLL-2003 dev) with

* ``elmo_core`` (``embed_sentences``: sentences grouped by length and laid end to end in
  ``--batch-size`` LSTM rows with the state reset at each sentence start; input-to-gate
  products for many steps at once, and for the first layer once per word type; the recurrent
  weight pre-packed for the step loop; the two directions side by side; per-type token cache),
  and
* a plain reference: batches of ``--batch-size`` sentences in file order padded to their longest
  sentence, one LSTM step at a time with separate input and recurrent products, token encoder on
  every position.

Both run ``--batch-size`` LSTM rows at a time. With ``--allennlp-python`` (the conformance harness's
environment, ``make conformance-env``), AllenNLP 2.10.1's ``_ElmoBiLm`` embeds the same sentences from the
same saved files too (``benchmarks/conformance/allennlp_embed.py``: file-order batches padded to their
longest sentence, every position through the token encoder, as AllenNLP's ``Elmo`` does), in a process of
its own at the same ``--threads``, in the same rounds.

Implementations run in turn, ``--repeats`` rounds; it prints each one's best tokens/s (and every
run's time), peak resident memory of each phase, the speed ratio, the largest absolute
difference between the two outputs, and the achieved fraction of this machine's matmul FLOP/s
(measured in the same run with large float32 products): the matrix-product FLOPs each
implementation actually executes (``executed_flops``) per second, over that peak.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks import SHARED
from elmo_core import BiLM, batch_to_ids, load_bilm, save_bilm
from elmo_core.bilm import reverse_padded
from elmo_core.characters import BOS_TOKEN, EOS_TOKEN, PAD_CHAR, token_to_ids
from elmo_core.embed import embed_sentences, row_groups
from elmo_core.options import parse_options

PAPER_OPTIONS = {
    "lstm": {
        "dim": 4096,
        "projection_dim": 512,
        "n_layers": 2,
        "cell_clip": 3,
        "proj_clip": 3,
        "use_skip_connections": True,
    },
    "char_cnn": {
        "embedding": {"dim": 16},
        "n_highway": 2,
        "n_characters": 262,
        "activation": "relu",
        "max_characters_per_token": 50,
        "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
    },
}
DEFAULT_CONLL = SHARED / "data/conll2003/eng.testa"


def read_conll_sentences(path: Path, limit: int) -> list[list[str]]:
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("-DOCSTART-"):
            if current:
                sentences.append(current)
                current = []
            if len(sentences) >= limit:
                break
            continue
        current.append(line.split()[0])
    if current and len(sentences) < limit:
        sentences.append(current)
    return sentences


def reset_peak_rss() -> None:
    try:  # Linux: writing 5 resets the peak resident set size (VmHWM)
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def matmul_peak_flops(seconds: float = 3.0) -> float:
    """Best float32 GEMM rate over a few large square sizes, about ``seconds`` in all; a size whose one
    untimed multiplication alone outlasts ``seconds`` ends the search (a short measurement, as in the tests)."""
    best = 0.0
    for n in (1024, 2048, 4096):
        a, b = torch.randn(n, n), torch.randn(n, n)
        start = time.perf_counter()
        torch.mm(a, b)
        if best and time.perf_counter() - start > seconds:
            break
        reps, start = 0, time.perf_counter()
        while not reps or time.perf_counter() - start < seconds / 3:  # one timed multiplication at least
            torch.mm(a, b)
            reps += 1
        best = max(best, 2 * n**3 * reps / (time.perf_counter() - start))
    return best


# --------------------------------------------------------------------------- reference
def reference_layers(bilm: BiLM, char_ids: torch.Tensor) -> torch.Tensor:
    """Plain implementation of the same computation, for speed and correctness comparison."""
    opts = bilm.opts
    ids, lengths = bilm.add_boundaries(char_ids)
    B, T, C = ids.shape
    tokens = bilm.token_encoder(ids.view(-1, C)).view(B, T, -1)
    valid = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1).float()
    tokens = tokens * valid
    layers = [torch.cat([tokens, tokens], -1)]
    per_direction = []
    for direction, stack in enumerate((bilm.forward_layers, bilm.backward_layers)):
        x = tokens if direction == 0 else reverse_padded(tokens, lengths)
        outs = []
        for k, lstm in enumerate(stack):
            h = torch.zeros(B, opts.projection_dim)
            c = torch.zeros(B, opts.dim)
            steps = []
            for t in range(T):
                gates = x[:, t] @ lstm.w_x + h @ lstm.w_h + lstm.bias + lstm.forget_bias
                i, j, f, o = gates.chunk(4, 1)
                c_new = (torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(j)).clamp(-opts.cell_clip, opts.cell_clip)
                h_new = ((torch.sigmoid(o) * torch.tanh(c_new)) @ lstm.w_p).clamp(-opts.proj_clip, opts.proj_clip)
                m = valid[:, t]
                h, c = m * h_new + (1 - m) * h, m * c_new + (1 - m) * c
                steps.append(h_new * m)
            out = torch.stack(steps, 1)
            if k > 0 and opts.use_skip_connections:
                out = out + x
            outs.append(out if direction == 0 else reverse_padded(out, lengths))
            x = out
        per_direction.append(outs)
    layers += [torch.cat(fb, -1) for fb in zip(*per_direction)]
    n = char_ids.shape[1]
    return torch.stack(layers)[:, :, 1 : n + 1]


def run_reference(bilm: BiLM, sentences, batch_size: int) -> list[torch.Tensor]:
    outputs = []
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start : start + batch_size]
            layers = reference_layers(bilm, batch_to_ids(batch))
            outputs += [layers[:, r, : len(s)] for r, s in enumerate(batch)]
    return outputs


def char_widths(words) -> list[int]:
    """For each distinct character-id row among ``words`` (+ <S> and </S>): the position after
    its last id that is not in-token padding."""
    rows = {tuple(token_to_ids(w)) for w in words} | {tuple(token_to_ids(w)) for w in (BOS_TOKEN, EOS_TOKEN)}
    return [max(i + 1 for i, c in enumerate(r) if c != PAD_CHAR + 1) for r in rows]


def group_widths(sentences, batch_size: int) -> list[int]:
    """Widths of the distinct words of each group of sentences run together (with repeats across
    groups): the rows of the first layers' input products, and of the token encoder without cache."""
    groups = row_groups([len(s) for s in sentences], batch_size)
    return [w for g in groups for w in char_widths({t for i in g for t in sentences[i]})]


def executed_flops(opts, n_tokens: int, encoded_widths: list[int], n_first_inputs: int) -> float:
    """Matmul FLOPs: the LSTMs' recurrent and projection products on every token (with
    boundaries), the input-to-gate products of layers 2..L on every token and of layer 1 on
    ``n_first_inputs`` rows (its input is the token layer: once per distinct word where the
    implementation does that), and the token encoder once per entry of ``encoded_widths``, its
    convolutions over the windows that reach a character before the in-token padding (all
    windows: pass ``max_characters_per_token``)."""
    P, D, F, C = opts.projection_dim, opts.dim, opts.n_filters, opts.max_characters_per_token
    input_product, step = 2 * P * 4 * D, 2 * P * 4 * D + 2 * D * P
    lstm = 2 * (
        opts.n_layers * step * n_tokens
        + (opts.n_layers - 1) * input_product * n_tokens
        + input_product * n_first_inputs
    )
    dense = opts.n_highway * 2 * 2 * F * F + 2 * F * P
    conv = sum(2 * min(C - w + 1, width) * w * opts.char_dim * n for width in encoded_widths for w, n in opts.filters)
    return lstm + conv + dense * len(encoded_widths)


@dataclasses.dataclass
class Layout:
    """The sentences of a round and how each implementation lays them out: the groups of the LSTM
    batch (``per_group``: each group's token encoder rows), the reference's padded positions, and the
    tokens with sentence boundaries."""

    sentences: list
    batch_size: int
    per_group: list
    padded: int
    n_with_bounds: int


def embed_with_elmo_core(bilm, layout: Layout, cache: bool):
    bilm.token_cache_size = 100_000 if cache else 0
    bilm.clear_token_cache()
    bilm.token_cache_misses = 0
    out = dict(embed_sentences(bilm, layout.sentences, layout.batch_size, progress=False))
    # the token encoder runs once per word type: over the whole run with the cache, per group
    # without it; the first layers' input products run once per word type and group
    encoded = char_widths({t for s in layout.sentences for t in s}) if cache else layout.per_group
    if cache and len(encoded) != bilm.token_cache_misses:
        raise RuntimeError(f"expected {len(encoded)} token encoder rows, the cache computed {bilm.token_cache_misses}")
    return out, executed_flops(bilm.opts, layout.n_with_bounds, encoded, len(layout.per_group))


def reference_flops(bilm, layout: Layout) -> float:
    """The reference works on every position of its padded batches, padding included."""
    return executed_flops(bilm.opts, layout.padded, [bilm.opts.max_characters_per_token] * layout.padded, layout.padded)


def embed_with_reference(bilm, layout: Layout):
    return run_reference(bilm, layout.sentences, layout.batch_size), reference_flops(bilm, layout)


def embed_with_allennlp(python: Path, tmp: Path, bilm, layout: Layout):
    """AllenNLP's ``_ElmoBiLm`` in its own interpreter on the same weights; it times its own pass."""
    (tmp / "sentences.txt").write_text("".join(" ".join(s) + "\n" for s in layout.sentences), encoding="utf-8")
    script = Path(__file__).resolve().parent / "conformance" / "allennlp_embed.py"
    command = [str(python), str(script), str(tmp / "options.json"), str(tmp / "weights.hdf5")]
    command += [str(tmp / "sentences.txt"), str(tmp / "allennlp.npz"), "--batch-size", str(layout.batch_size)]
    command += ["--threads", str(torch.get_num_threads()), "--repeats", "1"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"AllenNLP side failed:\n{done.stderr[-2000:]}")
    seconds = json.loads(done.stdout.strip().splitlines()[-1])["seconds"][0]
    with np.load(tmp / "allennlp.npz") as layers:
        kept = [layers[f"arr_{k}"] for k in range(len(layers.files))]
    return kept, reference_flops(bilm, layout), seconds


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=400, help="CoNLL-2003 dev sentences embedded per round")
    ap.add_argument("--batch-size", type=int, default=64, help="rows of the LSTM batch (sentences laid end to end)")
    ap.add_argument("--conll", type=Path, default=DEFAULT_CONLL, help="CoNLL-2003 file the sentences come from")
    ap.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="rounds of all implementations in turn; each one's best time is reported (default 2)",
    )
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--threads", type=int, default=None, help="torch threads of every side (default: torch's)")
    ap.add_argument("--allennlp-python", type=Path, help="an interpreter with allennlp 2.10.1 (make conformance-env)")
    ap.add_argument(
        "--peak-seconds",
        type=float,
        default=3.0,
        help="seconds of the float32 matmul run that measures the machine's peak (default 3)",
    )
    return ap


def time_rounds(implementations: dict, repeats: int, n_tok: int, peak: float) -> tuple[dict, dict]:
    """Every implementation in turn, ``repeats`` rounds; each one's best time, peak memory and fraction of
    the matmul peak, and the outputs of the implementations that are compared."""
    results, outputs = {}, {}
    for _ in range(repeats):  # rounds in turn; each implementation's best time is kept
        outputs["reference"] = None
        for name, run in implementations.items():
            outputs[name] = None  # only elmo_core's output of this round is held while another one runs
            reset_peak_rss()
            start = time.perf_counter()
            out, flops, *timed = run()
            elapsed = timed[0] if timed else time.perf_counter() - start  # its own process times its own pass
            if name in ("elmo_core", "reference", "allennlp _ElmoBiLm"):
                outputs[name] = out
            del out
            r = results.setdefault(name, {"seconds": float("inf"), "peak_rss_mb": 0.0, "runs_s": []})
            r["runs_s"].append(round(elapsed, 3))
            r["peak_rss_mb"] = max(r["peak_rss_mb"], peak_rss_mb())
            if elapsed < r["seconds"]:
                r.update(seconds=elapsed, tokens_per_s=n_tok / elapsed, peak_fraction=flops / elapsed / peak)
    return results, outputs


def print_results(results: dict) -> None:
    print(
        f"\n{'implementation':<28}{'tokens/s':>10}{'seconds':>10}{'peak RSS MB':>13}{'of matmul peak':>16}"
        f"   all runs (s)"
    )
    for name, r in results.items():
        print(
            f"{name:<28}{r['tokens_per_s']:>10.1f}{r['seconds']:>10.2f}{r['peak_rss_mb']:>13.0f}"
            f"{100 * r['peak_fraction']:>15.1f}%   {', '.join(f'{x:.2f}' for x in r['runs_s'])}"
        )


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    sentences = read_conll_sentences(args.conll, args.sentences)
    n_tok = sum(len(s) for s in sentences)
    n_with_bounds = n_tok + 2 * len(sentences)
    print(
        f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; {len(sentences)} sentences, {n_tok} tokens from {args.conll}"
    )

    peak = matmul_peak_flops(args.peak_seconds)
    print(f"matmul peak (float32, measured): {peak / 1e9:.1f} GFLOP/s")

    saved = tempfile.TemporaryDirectory()
    tmp = Path(saved.name)
    bilm = BiLM(parse_options(PAPER_OPTIONS))
    save_bilm(bilm, tmp / "options.json", tmp / "weights.hdf5")
    del bilm
    bilm = load_bilm(tmp / "options.json", tmp / "weights.hdf5")
    n_params = sum(p.numel() for p in bilm.parameters())
    print(f"paper-size biLM: {n_params / 1e6:.1f}M parameters (random weights, original format round trip)")

    per_group = group_widths(sentences, args.batch_size)
    # the reference works on every position of its padded batches, padding included
    padded = sum(
        len(b) * (max(map(len, b)) + 2)
        for b in (sentences[i : i + args.batch_size] for i in range(0, len(sentences), args.batch_size))
    )

    layout = Layout(sentences, args.batch_size, per_group, padded, n_with_bounds)
    implementations = {
        "elmo_core": lambda: embed_with_elmo_core(bilm, layout, cache=True),
        "elmo_core (no token cache)": lambda: embed_with_elmo_core(bilm, layout, cache=False),
        "reference": lambda: embed_with_reference(bilm, layout),
    }
    if args.allennlp_python:
        implementations["allennlp _ElmoBiLm"] = lambda: embed_with_allennlp(args.allennlp_python, tmp, bilm, layout)
    results, outputs = time_rounds(implementations, args.repeats, n_tok, peak)
    if args.allennlp_python:  # its own process's peak, not this one's
        results["allennlp _ElmoBiLm"]["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    fast_out, ref_out = outputs["elmo_core"], outputs["reference"]
    max_diff = max(float((torch.from_numpy(fast_out[i]) - ref_out[i]).abs().max()) for i in range(len(sentences)))

    print_results(results)
    ratio = results["reference"]["seconds"] / results["elmo_core"]["seconds"]
    print(
        f"\nspeed-up over reference: {ratio:.2f}x   (no-cache: "
        f"{results['reference']['seconds'] / results['elmo_core (no token cache)']['seconds']:.2f}x)"
    )
    print(f"max |elmo_core - reference| over all layers: {max_diff:.2e}")
    figures = {"results": results, "speedup": ratio, "max_abs_diff": max_diff, "matmul_peak_flops": peak}
    if args.allennlp_python:
        theirs = outputs["allennlp _ElmoBiLm"]
        allennlp_diff = max(float(np.abs(fast_out[i] - theirs[i]).max()) for i in range(len(theirs)))
        figures["allennlp_speedup"] = results["allennlp _ElmoBiLm"]["seconds"] / results["elmo_core"]["seconds"]
        figures["max_abs_diff_allennlp"] = allennlp_diff
        print(
            f"speed-up over AllenNLP's _ElmoBiLm: {figures['allennlp_speedup']:.2f}x at {torch.get_num_threads()} "
            f"thread(s); max |elmo_core - AllenNLP| on its first {len(theirs)} sentences: {allennlp_diff:.2e}"
        )
    saved.cleanup()
    if args.json:
        args.json.write_text(
            json.dumps(
                {**figures, "tokens": n_tok, "threads": torch.get_num_threads()},
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
