"""What a table directory of the report holds besides its tables (Peters et al. 2018, Tables 1-3 are
rebuilt from run records): the records kept beside them (``collect``), the runs that fit no cell
(``extras.md``), and the options it was built with (``report.json``), which a later report into it
must keep (``stored_settings``) and whose records it never mixes with other runs' (``refuse_other_tables``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.record import Record

from .cell_rules import describe
from .figures import bilm_name, shipped_bilms
from .run_frame import Selection, records
from .table_folder_guard import may_remove, read_report_json


def collect(src: Path, root: Path, dest_root: Path) -> Path:
    """Copy one record, with the predictions it keeps, to the same place below ``dest_root``; a record
    of another identity already there is kept, and this one goes to ``<dir>@<digest>`` beside it (as
    ``run.py`` does). A record of the same identity already there is never replaced: if its content
    differs, it is kept and the copy is skipped with a line saying so."""
    from experiments.predictions_file import copy_predictions
    from experiments.run_directories import record_dir
    from suite_common.atomic_files import write_bytes_atomic

    dest = dest_root / src.relative_to(root)
    if src.resolve() == dest.resolve():
        return dest
    record = Record.read(src)
    digest = record.digest()
    if digest:
        dest = record_dir(dest.parent, digest, src.name) / src.name
    if dest.exists():
        if dest.read_bytes() != src.read_bytes():
            print(f"note: {dest} is kept: a record of the same configuration is there already (not replaced by {src})")
        return dest
    # the predictions first (checked, then copied): a record never names a missing file
    copy_predictions(record.predictions, src.parent, dest.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(dest, src.read_bytes())
    return dest


def refuse_other_tables(out: Path, select: Selection) -> None:
    """Tables are only ever rewritten for the profile and biLM whose records are kept beside them
    (``<out>/runs``): another biLM's or profile's tables need their own ``--out``."""
    kept = [r for _, r in records([out / "runs"], "results.json")] if (out / "runs").is_dir() else []
    other = [r for r in kept if not select.admits(r)]
    if other:
        shipped = shipped_bilms()
        found = sorted(
            {f"profile {r.profile}, biLM {bilm_name(r.bilm_sha256, shipped) if r.bilm_sha256 else '-'}" for r in other}
        )
        raise SystemExit(
            f"error: {out} holds the tables of other runs ({'; '.join(found)}: {out / 'runs'}); "
            f"write these with another --out"
        )


def write_extras(extras: dict, out: Path, made: set[str] | None = None) -> list[str]:
    """``extras.md``: records left out of every cell because their configuration is not what their
    profile prescribes (``cell_rules``), each with the keys that differ. None: an earlier one is removed
    where the folder's last report made it (``made``). The files written."""
    path = out / "extras.md"
    if not extras:
        if may_remove(path.name, made):
            path.unlink(missing_ok=True)
        return []
    lines = [
        "# Runs not in any table cell",
        "",
        "Their configuration differs from what their profile, task and ablation prescribe (`reporting/cell_rules.py`), "
        "so they are listed here and never averaged into a cell.",
        "",
        "| task | ablation | seed | dev | differs in | record |",
        "|---|---|---|---|---|---|",
    ]
    for path_, (r, diff) in sorted(extras.items()):
        value = r.value
        lines.append(
            f"| {r.task} | {r.ablation or '-'} | {r.seed} "
            f"| {f'{value:.2f}' if isinstance(value, (int, float)) else '-'} | {describe(diff)} | `{path_}` |"
        )
    path.write_text("\n".join(lines) + "\n")
    print(f"{len(extras)} run(s) whose configuration differs from their profile's are listed apart in {path}")
    return [path.name]


SETTINGS = ("profile", "bilm", "accept", "split")  # the options a table directory keeps in report.json


def own_runs(out: Path) -> list[Path]:
    """The records a table directory was built from: those ``report.json`` names (``runs``), else the
    ones kept beside its tables (``<out>/runs``)."""
    stored = (read_report_json(out) or {}).get("runs")
    return [Path(p) for p in stored] if stored else [out / "runs"]


def refuse_other_runs(args: argparse.Namespace) -> None:
    """A table directory belongs to the runs it was built from: a report into it from other records
    (without ``--collect``, which adds them to ``<out>/runs`` first) stops before writing anything."""
    if not (args.out / "report.json").is_file() or args.collect:
        return
    own = own_runs(args.out)
    if sorted(p.resolve() for p in args.runs) != sorted(p.resolve() for p in own):
        raise SystemExit(
            f"error: {args.out} holds the tables of {' '.join(map(str, own))}; a report of "
            f"{' '.join(map(str, args.runs))} needs another --out (or --collect: its records added to "
            f"{args.out / 'runs'})"
        )


def stored_settings(args: argparse.Namespace, given: set[str]) -> None:
    """Fill the options not given on the command line from ``<out>/report.json``; an option given with
    another value than the stored one stops the report (the directory's tables were built by other rules)."""
    path = args.out / "report.json"
    stored = read_report_json(args.out)
    if stored is None:
        if args.runs is None:
            args.runs = [Path("outputs/runs")]
        return
    for key in SETTINGS:
        if key not in given:
            setattr(args, key, stored.get(key, getattr(args, key)))
        elif getattr(args, key) != stored.get(key):
            flag = f"--{key}"
            raise SystemExit(
                f"error: {args.out} was built with {flag} {stored.get(key)!r}, not {getattr(args, key)!r} "
                f"({path}); write these tables with another --out"
            )
    if args.runs is None:
        args.runs = own_runs(args.out)
