"""The dev metric after each epoch of short runs, grouped by what sets them apart from their profile: the
check of the suite's paper-profile NER (Peters et al. 2018 appendix A.7) against a reference implementation's
learning curve, setting by setting.

    python -m reporting.epoch_curves --runs results/history/paper_small-v2/init_check/runs --task ner --epochs 3 \\
        --reference 84.43 [--out results/history/paper_small-v2/init_check/curves.md]

Every record below ``--runs`` of the task that ran at least ``--epochs`` epochs gives one row: its settings
that differ from what its profile and ablation prescribe (``cell_rules.differences``), its seed, the dev
metric after epochs 1 .. ``--epochs``, and the gap of the last of them to ``--reference``. Each setting
then gets its mean ± std over seeds. The footer names the records' commands, hardware and dates.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from experiments.record import Record
from suite_common.errors import SuiteError

from .cell_rules import differences
from .report import general_paths


def setting_of(r: Record, accepted: tuple[str, ...] = ()) -> str:
    """What sets a run apart from its profile (``key=value`` pairs, sorted), or ``as prescribed``; ``accepted``
    keys (``--accept``, as the report's) are not named."""
    ran = {k: v[0] for k, v in differences(r, accepted).items() if k != "trainer.max_epochs"}
    return " ".join(f"{k}={v}" for k, v in sorted(ran.items())) or "as prescribed"


def curve(r: Record, epochs: int) -> list[float] | None:
    """The dev metric after epochs 1 .. ``epochs``, or None when the run has fewer."""
    by_epoch = {e.get("epoch"): e.get(f"dev_{r.metric}") for e in r.epochs or []}
    values = [by_epoch.get(i) for i in range(1, epochs + 1)]
    return None if any(v is None for v in values) else [float(v) for v in values]


def collect(
    roots: list[Path], task: str, epochs: int, accepted: tuple[str, ...] = ()
) -> dict[tuple[str, str], list[tuple[int, list[float], Record]]]:
    """``(ablation, setting) -> [(seed, curve, record)]``, seeds sorted, one record per seed and setting."""
    groups: dict[tuple[str, str], dict[int, tuple[list[float], Record]]] = {}
    for root in roots:
        if not root.is_dir():
            raise SuiteError(f"{root}: no such directory of run records")
        for path in sorted(root.glob("**/results.json")):
            r = Record.read(path)
            if r.task != task or (values := curve(r, epochs)) is None:
                continue
            groups.setdefault((r.ablation, setting_of(r, accepted)), {})[r.seed] = (values, r)
    return {key: [(s, *by_seed[s]) for s in sorted(by_seed)] for key, by_seed in sorted(groups.items())}


def table(groups: dict, epochs: int, reference: float | None) -> str:
    after = " / ".join(str(i) for i in range(1, epochs + 1))
    gap = f" | gap to {reference} after epoch {epochs}" if reference is not None else ""
    lines = [
        f"| ablation | setting | seed | dev after epochs {after}{gap} |",
        "|---|---|---|---|" + ("---|" if gap else ""),
    ]
    for (ablation, setting), runs in groups.items():
        for seed, values, _ in runs:
            cells = " / ".join(f"{v:.2f}" for v in values)
            lines.append(
                f"| {ablation} | {setting} | {seed} | {cells}"
                + (f" | {reference - values[-1]:.2f}" if gap else "")
                + " |"
            )
        if len(runs) > 1:
            matrix = np.array([values for _, values, _ in runs])
            means = " / ".join(f"{v:.2f}" for v in matrix.mean(0))
            last = matrix[:, -1]
            lines.append(
                f"| {ablation} | {setting} | mean ± std (n={len(runs)}) | {means} ± {last.std(ddof=1):.2f}"
                + (f" | {reference - last.mean():.2f}" if gap else "")
                + " |"
            )
    return "\n".join(lines)


def footer(groups: dict, command: str) -> str:
    records = [r for runs in groups.values() for _, _, r in runs]
    dates = sorted(r.date for r in records if r.date)
    machines = sorted(
        {
            f"{h.get('machine', '?')} {h.get('cpu', '(processor not recorded)')}, {h.get('cpus', '?')} CPUs, "
            f"{h.get('torch_threads', '?')} torch thread(s), {h.get('device', '?')}"
            for h in (r.hardware or {} for r in records)
        }
    )
    commands = sorted({general_paths(r.command) for r in records if r.command})
    lines = [
        "## Produced by",
        "",
        f"{len(records)} run records, {dates[0] if dates else '?'} to {dates[-1] if dates else '?'}; hardware: "
        + "; ".join(machines)
        + ".",
        "Commands (each record's own; `RUNS`: the runs root they were made under; `CACHE`: the activation cache's "
        "directory there):",
        "",
        *[f"- `{c}`" for c in commands],
        "",
        f"Rebuilt from the records with `{command}`.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=Path, nargs="+", required=True, help="directories searched for results.json")
    ap.add_argument("--task", required=True, help="the task whose runs are shown (e.g. ner)")
    ap.add_argument("--epochs", type=int, default=3, help="the epochs shown (runs with fewer are left out)")
    ap.add_argument("--reference", type=float, help="a reference's dev metric after the last epoch shown")
    ap.add_argument("--out", type=Path, help="write the table here (default: print it)")
    ap.add_argument("--accept", nargs="+", default=[], metavar="KEY", help="keys not named in a run's setting")
    args = ap.parse_args(argv)
    if args.epochs < 1:
        ap.error(f"--epochs {args.epochs}: at least 1 epoch is shown")
    try:
        groups = collect(args.runs, args.task, args.epochs, tuple(args.accept))
    except SuiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not groups:
        print(
            f"error: no {args.task} record with {args.epochs} epochs below {', '.join(map(str, args.runs))}",
            file=sys.stderr,
        )
        return 2
    command = " ".join(
        ["python -m reporting.epoch_curves --runs", *map(str, args.runs), f"--task {args.task} --epochs {args.epochs}"]
        + ([f"--reference {args.reference}"] if args.reference is not None else [])
        + ([f"--out {args.out}"] if args.out else [])
        + ([f"--accept {' '.join(args.accept)}"] if args.accept else [])
    )
    text = table(groups, args.epochs, args.reference) + "\n\n" + footer(groups, command) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
