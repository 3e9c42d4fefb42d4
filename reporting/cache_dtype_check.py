"""Is a float16 activation cache harmless? The same runs with the biLM's layers cached in float32 and in
float16 (``cache.dtype``; Peters et al. 2018 §3.3: the frozen biLM's layers are computed once),
seed by seed, beside the seed-to-seed spread.

    python -m reporting.cache_dtype_check --float32 results/history/small-v2_quick/runs \
        --float16 results/history/small-v2_quick/float16/runs \
        [--out results/history/small-v2_quick/float16/cache_dtype.md]

Pairs the records of ``--float16`` (runs with ``cache.dtype=float16``) with the records of
``--float32`` that have the same task, ablation, profile, seed and biLM and the default dtype, and
writes per task: the dev metric of each seed in both dtypes, mean ± std of each, and the difference of
the means against the float32 seeds' standard deviation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from experiments.record import Record
from reporting.side_report import emit


def records(root: Path) -> list[Record]:
    return [Record.read(p) for p in sorted(root.glob("**/results.json"))]


def cache_dtype(r: Record) -> str:
    return r.run.cache.dtype


def key(r: Record) -> tuple:
    return (r.task, r.ablation, r.profile, r.seed, r.bilm_sha256)


def table(float32: list[Record], float16: list[Record]) -> tuple[str, list[str]]:
    plain = {key(r): r for r in float32 if cache_dtype(r) == "float32" and r.fraction == 1.0}
    by_task: dict[str, list[tuple[float, float]]] = {}
    for r in float16:
        if cache_dtype(r) != "float16" or key(r) not in plain:
            continue
        by_task.setdefault(f"{r.task} ({r.metric})", []).append((plain[key(r)].value, r.value))
    lines = [
        "| task | seeds | float32, per seed | float16, per seed | float32 mean ± std | float16 mean ± std "
        "| difference of the means | in float32 std |",
        "|---|---|---|---|---|---|---|---|",
    ]
    commands = sorted({r.command for r in float16})
    for task, pairs in sorted(by_task.items()):
        a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        std = a.std(ddof=1) if len(a) > 1 else float("nan")
        lines.append(
            f"| {task} | {len(pairs)} | {' / '.join(f'{v:.2f}' for v in a)} | {' / '.join(f'{v:.2f}' for v in b)} "
            f"| {a.mean():.2f} ± {std:.2f} | {b.mean():.2f} ± {b.std(ddof=1) if len(b) > 1 else float('nan'):.2f} "
            f"| {b.mean() - a.mean():+.2f} | {(b.mean() - a.mean()) / std:+.2f} |"
        )
    return "\n".join(lines), commands


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--float32", type=Path, required=True, help="records of the default (float32) runs")
    ap.add_argument("--float16", type=Path, required=True, help="records of the same runs with cache.dtype=float16")
    ap.add_argument("--out", type=Path, help="Markdown file to write (default: print only)")
    args = ap.parse_args(argv)
    text, commands = table(records(args.float32), records(args.float16))
    f16 = records(args.float16)
    dates = sorted(r.date for r in f16)
    hardware = sorted({json.dumps(r.hardware, sort_keys=True) for r in f16})
    report = (
        "# float16 against float32 activation cache (dev)\n\n"
        + text
        + "\n\nfloat16 runs: "
        + "; ".join(f"`{c}`" for c in commands)
        + f", {dates[0] if dates else '?'} to {dates[-1] if dates else '?'}, "
        f"hardware {', '.join(hardware)}. float32 runs: the committed records of `{args.float32}` "
        "(their commands in that directory's tables). Made by `python -m reporting.cache_dtype_check "
        f"--float32 {args.float32} --float16 {args.float16}" + (f" --out {args.out}" if args.out else "") + "`.\n"
    )
    emit(report, args.out)


if __name__ == "__main__":
    main()
