"""Old and new numbers side by side when the biLM changes (Peters et al. 2018, Tables 1-3, 7 and the
probes of Tables 5-6): every cell of our own columns of two report directories, as "old → new" with
the change of the mean; a gain's intervals and p-value (Table 1) as "old → new".

    python -m reporting.compare_tables --old results --new results/small --out results/small/compare.md

Reads the ``.csv`` tables that ``reporting.report`` writes (``table1``, ``table2``, ``table3``,
``table7``, ``probes``) from both directories; a table missing from either is listed as missing,
and a cell empty in either (``—``) stays visible as such. The numbers are the tables' own: each
table's ``.md`` file names the commands, hardware, dates and biLM behind it.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

TABLES = {
    "table1": "Table 1: baseline vs ELMo",
    "table2": "Table 2: layer weighting",
    "table3": "Table 3: where ELMo goes",
    "table7": "Table 7: biLM dev perplexity before → after fine-tuning",
    "probes": "Tables 5-6: probes per biLM layer",
}
KEYS = {"probes": ["probe", "layer"]}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class CompareError(ValueError):
    """The two directories' tables cannot be put side by side."""


def _ours(columns) -> list[str]:
    """Our own columns: every "(ours ...)" one, and a gain's intervals (over seeds, and the paired
    bootstrap with its p-value), which are ours too."""
    return [c for c in columns if ("ours" in c or c.startswith("increase:")) and not c.endswith("(paper)")]


def _mean(cell: str) -> float | None:
    """The first number of a cell ("62.69 ± 0.84 (n=3)" -> 62.69; "860.2 → 413.1" -> 860.2)."""
    if not isinstance(cell, str) or cell.startswith("—"):
        return None
    found = NUMBER.search(cell)
    return float(found.group()) if found else None


def _side_by_side(old: str, new: str) -> str:
    if old == new:
        return f"{new} (same)"
    if "→" in old + new:  # a before → after cell (Table 7)
        return f"old {old}; new {new}"
    text = f"{old} → {new}"
    a, b = _mean(old), _mean(new)
    if a is not None and b is not None and not (old + new).startswith("["):  # an interval has no one value
        text += f" ({b - a:+.2f})"
    return text


def compare(old: pd.DataFrame, new: pd.DataFrame, keys: list[str], name: str) -> pd.DataFrame:
    """One row per key present in either table; per "ours" column, old → new."""
    for frame, side in ((old, "old"), (new, "new")):
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise CompareError(f"{name}: the {side} table has no column {missing[0]!r}")
    columns = [c for c in _ours(new.columns) if c in old.columns] or _ours(new.columns)
    merged = old.astype(str).merge(new.astype(str), on=keys, how="outer", suffixes=(" old", " new"))
    rows = []
    for _, r in merged.iterrows():
        row = {k: r[k] for k in keys}
        for c in columns:
            before = r.get(f"{c} old", r.get(c)) if c in old.columns else "—"
            after = r.get(f"{c} new", r.get(c))
            before = "—" if pd.isna(before) or before == "nan" else before
            after = "—" if pd.isna(after) or after == "nan" else after
            row[c] = _side_by_side(before, after)
        rows.append(row)
    return pd.DataFrame(rows)


def write(old_dir: Path, new_dir: Path, out: Path, profiles: bool = False, title: str | None = None) -> Path:
    """``profiles``: the two directories hold two run profiles (quick → paper) of one biLM, not two biLMs;
    ``title``: what changed between them, when it is something else (e.g. a setting's default)."""
    what = title or ("Quick and paper profile" if profiles else "Old and new biLM")
    same = (
        ". Each table's `.md` file in those directories names its profile, biLM,"
        if profiles
        else '; "(same)" where both tables hold the same runs (the baselines, which do not use the biLM). Each '
        "table's `.md` file in those directories names its biLM,"
    )
    parts = [
        f"# {what} side by side\n\nOld: `{old_dir}/`; new: `{new_dir}/`. Each cell: old → new "
        f"(change of the mean){same} commands, hardware and dates.\n\nMade by `python -m reporting.compare_tables "
        f"--old {old_dir} --new {new_dir} --out {out}{' --profiles' if profiles else ''}"
        f"{f' --title {chr(34)}{title}{chr(34)}' if title else ''}`.\n"
    ]
    for name, title in TABLES.items():
        paths = [old_dir / f"{name}.csv", new_dir / f"{name}.csv"]
        absent = [f"{p} missing" for p in paths if not p.exists()] + [
            f"{p} has no rows" for p in paths if p.exists() and not p.read_text().strip()
        ]
        if absent:
            parts.append(f"\n## {title}\n\nNot compared: {', '.join(absent)}.\n")
            continue
        old, new = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in paths)
        key = KEYS.get(name, [new.columns[0]])
        table = compare(old, new, key, f"{name} ({paths[0]}, {paths[1]})")
        parts.append(f"\n## {title}\n\n{table.to_markdown(index=False)}\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(parts))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, required=True, help="report directory of the old biLM (e.g. results)")
    ap.add_argument("--new", type=Path, required=True, help="report directory of the new biLM (e.g. results/small)")
    ap.add_argument("--out", type=Path, required=True, help="markdown file to write")
    ap.add_argument(
        "--profiles",
        action="store_true",
        help="the directories hold two run profiles of one biLM (e.g. results/small and results/paper)",
    )
    ap.add_argument(
        "--title",
        help="what changed between the two directories, for the heading (default: the "
        "biLM, or with --profiles the profile)",
    )
    args = ap.parse_args(argv)
    try:
        print(f"wrote {write(args.old, args.new, args.out, args.profiles, args.title)}")
    except (CompareError, pd.errors.ParserError, OSError) as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
