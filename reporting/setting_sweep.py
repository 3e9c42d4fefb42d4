"""One setting varied, everything else as the profile prescribes: the dev metric per task and value
(Peters et al. 2018 §3.3 leaves "a moderate amount of dropout" on ELMo to each task; this measures it).

    python -m reporting.setting_sweep --key elmo.dropout \
        --runs results/history/small-v2_quick/runs results/history/small-v2_quick/elmo_dropout/runs \
        [--ablations elmo,baseline] [--out results/history/small-v2_quick/elmo_dropout/table.md]

Takes every record below ``--runs`` whose configuration differs from what its profile, task and
ablation prescribe in ``--key`` at most (``cell_rules.differences``), groups them by profile, task,
ablation, encoder (biLM or Transformer) and the key's value, and writes mean ± std over seeds, the seeds'
values, and for
classification tasks with per-class accuracy (SICK) the lowest class accuracy of any seed, so a
collapsed class shows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from experiments.record import Record
from reporting.side_report import emit
from suite_common.typed_config import plain

from .cell_rules import differences, flat


def rows(roots: list[Path], key: str, ablations: set[str] | None = None, accepted: tuple[str, ...] = ()) -> dict:
    groups: dict[tuple, list[Record]] = {}
    for root in roots:
        for path in sorted(root.glob("**/results.json")):
            r = Record.read(path)
            if r.is_probe or set(differences(r, accepted)) - {key}:
                continue
            if ablations and r.ablation not in ablations:
                continue
            value = flat(plain(r.run)).get(key)
            encoder = r.encoder_kind if r.uses_encoder else "-"
            groups.setdefault((r.profile, r.task, r.ablation, encoder, value), []).append(r)
    return groups


def table(groups: dict, key: str) -> str:
    lines = [
        f"| profile | task | ablation | encoder | {key} | n | dev mean ± std | per seed | lowest class accuracy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (profile, task, ablation, encoder, value), records in sorted(
        groups.items(), key=lambda kv: tuple(map(str, kv[0]))
    ):
        by_seed = {r.seed: r for r in records}  # one record per seed (the same run may be listed twice)
        values = np.array([by_seed[s].value for s in sorted(by_seed)])
        classes = [min(r.dev["per_class_accuracy"].values()) for r in by_seed.values() if "per_class_accuracy" in r.dev]
        spread = f" ± {values.std(ddof=1):.2f}" if len(values) > 1 else ""
        lines.append(
            f"| {profile} | {task} | {ablation} | {encoder} | {value} | {len(values)} | {values.mean():.2f}{spread} "
            f"| {' / '.join(f'{v:.2f}' for v in values)} | {f'{min(classes):.1f}' if classes else '-'} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--key", required=True, help="the dotted configuration key that varies (e.g. elmo.dropout)")
    ap.add_argument("--runs", nargs="+", type=Path, required=True, help="directories searched for results.json")
    ap.add_argument("--ablations", help="only these ablations, comma-separated (e.g. elmo,baseline)")
    ap.add_argument("--out", type=Path, help="Markdown file to write (default: print only)")
    ap.add_argument(
        "--accept", nargs="+", default=[], metavar="KEY", help="keys that may differ as well (the report's)"
    )
    args = ap.parse_args(argv)
    ablations = set(args.ablations.split(",")) if args.ablations else None
    groups = rows(args.runs, args.key, ablations, tuple(args.accept))
    if not groups:
        raise SystemExit(f"error: no records below {', '.join(map(str, args.runs))} vary only in {args.key}")
    records = [r for rs in groups.values() for r in rs]
    dates = sorted(r.date for r in records)
    commands = sorted({r.command for r in records})
    text = (
        f"# {args.key}, everything else as prescribed (dev)\n\n{table(groups, args.key)}\n\nRecords from "
        f"{dates[0]} to {dates[-1]}; commands: " + "; ".join(f"`{c}`" for c in commands) + ". Made by "
        f"`python -m reporting.setting_sweep --key {args.key} --runs {' '.join(map(str, args.runs))}"
        + (f" --ablations {args.ablations}" if args.ablations else "")
        + (f" --out {args.out}" if args.out else "")
        + (f" --accept {' '.join(args.accept)}" if args.accept else "")
        + "`.\n"
    )
    emit(text, args.out)


if __name__ == "__main__":
    main()
