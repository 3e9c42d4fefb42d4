"""Tables and figures of the paper from run records (Peters et al. 2018, Tables 1-3, Figures 1-2).

    python -m reporting.report [--runs outputs/runs] [--out outputs/tables] [--collect] [--profile P] [--bilm B]

Reads every ``results.json`` below the given directories into a pandas frame (one row per run;
identical configurations counted once), then writes ``table1/2/3.{md,csv,tex}`` with mean ± std
over seeds, the number of seeds, and the paper's number beside ours, plus ``layer_weights_<biLM>_<profile>.png``
(Figure 2) and ``sample_efficiency_<biLM>_<profile>.png`` (Figure 1). ``--collect`` also copies each run's
``results.json`` into ``<out>/runs/`` so that committed tables can be rebuilt anywhere. Runs of
different profiles (``quick``, ``paper``) or different biLMs are never mixed: with several present,
``--profile`` and ``--bilm`` say which to report (runs without ELMo go with any biLM).
Our numbers are dev-set numbers on the data of this suite (see results/README.md).

By default the report reads your own runs (``outputs/runs``) and writes ``outputs/tables``. Each
table directory keeps the options it was built with in ``report.json`` (profile, biLM, accepted keys,
split); a later report into the same directory takes them from there, refuses different ones (a
committed table is never rebuilt under other rules), and reads the records kept beside the tables
(``<out>/runs``) unless ``--runs`` is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import re
from pathlib import Path

import pandas as pd

from experiments.runs_index import forget_walks

from .cell_rules import check_accepted, describe
from .cross_validation import fold_records
from .declared_tables import TABLES, ReportInputs
from .directory_backup import unchanged_on_failure
from .figures import bilm_name, shipped_bilms, write_figures
from .run_frame import choose, fold_run, load_runs, probes_table, records
from .table_directory import SETTINGS, collect, refuse_other_runs, refuse_other_tables, stored_settings, write_extras
from .table_folder_guard import checked_out, made_before, may_remove, refuse_links_in_runs, report_lock


@dataclasses.dataclass
class TableDir:
    """Where a report writes and what its tables say about themselves: the rebuild command of their
    footers, the keys runs may differ in (``--accept``, named in the titles), and what was written."""

    out: Path
    rebuild: str
    accepted: tuple[str, ...] = ()
    written: list[str] = dataclasses.field(default_factory=list)
    made: set[str] | None = None  # what the folder's last report made (``table_folder_guard.made_before``)
    files: list[str] = dataclasses.field(default_factory=list)  # every file this report made


def rebuild_command(out: Path, runs: list[Path] | None = None, options: str = "") -> str:
    """The command that rebuilds a table directory: from the records it was made from (``runs``;
    default: those kept beside it, ``<out>/runs``), with the same selection ``options``."""
    extra = "" if out == Path("outputs/tables") else f" --out {out}"
    return f"python -m reporting.report --runs {' '.join(map(str, runs or [out / 'runs']))}{extra}{options}"


MACHINE_PATHS = {"runs_root": "RUNS", "cache.dir": "CACHE"}  # key -> the name a footer writes for its path


def general_paths(command: str) -> str:
    """A record's command with its ``runs_root=PATH`` written ``runs_root=RUNS`` and its ``cache.dir=PATH``
    ``cache.dir=CACHE``: where the runs and their activation cache were kept says nothing about the result
    and differs from machine to machine."""
    for key, name in MACHINE_PATHS.items():
        command = re.sub(rf"(?<!\S)(\+*){re.escape(key)}=\S+", rf"\g<1>{key}={name}", command)
    return command


def provenance(sources: pd.DataFrame | None, target: TableDir) -> str:
    """Which commands, on which hardware and when, made the records behind a table."""
    if sources is None or sources.empty:
        return ""
    dates = sorted(sources.date)
    shipped = shipped_bilms()
    used = sorted(set(sources.bilm_sha256.dropna())) if "bilm_sha256" in sources else []
    lines = [
        "",
        "## Produced by",
        "",
        f"{len(sources)} run records, {dates[0]} to {dates[-1]}; hardware: {'; '.join(sorted(set(sources.hardware)))}.",
        f"biLM: {', '.join(bilm_name(sha, shipped) for sha in used) or 'none (no ELMo runs)'}; runs without ELMo "
        "do not depend on it.",
        "Commands (each record's `run_dir` names its own overrides):",
        "",
    ]
    commands = sources.command.map(general_paths)
    lines += [f"- `{cmd}` ({n} run{'s' if n > 1 else ''})" for cmd, n in commands.value_counts().sort_index().items()]
    if commands.str.startswith("python ").any():
        lines += [
            "",
            "`python`: the checkout's `.venv/bin/python` (what `make` installs; the README's commands name it).",
        ]
    if commands.str.contains("runs_root=RUNS", regex=False).any():
        lines += [
            "",
            "`RUNS`: the runs root the records were made under (a path on the machine that made them); "
            "the records themselves are in `runs/` beside this table.",
        ]
    if commands.str.contains("cache.dir=CACHE", regex=False).any():
        lines += ["", "`CACHE`: the activation cache's directory on that machine (where it is changes no result)."]
    lines += ["", f"Rebuilt from the records with `{target.rebuild}`."]
    return "\n".join(lines) + "\n"


def write_table(
    frame: pd.DataFrame,
    target: TableDir,
    name: str,
    title: str,
    sources: pd.DataFrame | None = None,
    notes: str = "",
    markdown=None,
) -> None:
    """``name``.csv, .md and .tex of ``frame``; ``markdown(frame)``: the .md's tables, when not the frame as one."""
    out = target.out
    profiles = sorted(set(sources.profile.dropna())) if sources is not None and "profile" in sources else []
    if profiles:
        title += f" — {', '.join(profiles)} profile"
    title += inputs_named(sources)
    if target.accepted:
        title += f" (runs may differ from it in: {', '.join(target.accepted)})"
    if not len(frame) or sources is None or sources.empty:  # no placeholder tables: one line instead
        for suffix in ("csv", "md", "tex"):
            if may_remove(f"{name}.{suffix}", target.made):
                (out / f"{name}.{suffix}").unlink(missing_ok=True)
        print(f"{name}: no runs for this table; none written")
        return
    frame.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.md").write_text(
        f"# {title}\n\n"
        + (markdown(frame) if markdown else frame.to_markdown(index=False))
        + "\n"
        + (f"\n{notes}\n" if notes else "")
        + provenance(sources, target)
    )
    (out / f"{name}.tex").write_text(frame.to_latex(index=False))
    target.written.append(f"{name}.md")
    target.files += [f"{name}.{suffix}" for suffix in ("csv", "md", "tex")]


def inputs_named(sources: pd.DataFrame | None) -> str:
    """The biLM(s) and word vectors a table's runs read, by name with the biLM's hash (the title's end)."""
    if sources is None or sources.empty or "bilm_sha256" not in sources:
        return ""
    shipped, parts = shipped_bilms(), []
    for sha, rows in sources.dropna(subset=["bilm_sha256"]).groupby("bilm_sha256"):
        folder = next(iter(rows.bilm_dir.dropna()), None) if "bilm_dir" in rows else None
        parts.append(bilm_name(sha, shipped) if sha in shipped or not folder else f"{folder} ({sha[:12]})")
    said = [f"biLM {', '.join(parts)}"] if parts else []
    if "vectors_name" in sources and sources.vectors_name.notna().any():
        said.append(f"vectors {', '.join(sorted(set(sources.vectors_name.dropna())))}")
    return f", {'; '.join(said)}" if said else ""


def refuse_empty(runs: list[Path], extras: dict) -> None:
    first = min(extras, default=None)
    if extras:
        raise SystemExit(
            f"error: every record below {', '.join(map(str, runs))} differs from what its profile "
            f"prescribes ({len(extras)}; {first}: {describe(extras[first][1])}); nothing was written. --accept "
            "KEY tables runs made with such a key on purpose"
        )
    raise SystemExit(f"error: no results.json under {', '.join(map(str, runs))}")


def collect_into(args, roots: list[Path], select) -> dict:
    """``--collect``: the records of ``roots`` that may join a cell (not the extras) are added to
    ``<out>/runs`` with their predictions; none would: stop before writing anything. Returns the records
    left out, with why, for ``extras.md`` (they are not copied, so the report of ``<out>/runs`` never sees
    them). A table directory inside a searched directory is refused: its own records and the report's
    copy of it would be collected as runs."""
    out = args.out.resolve()
    inside = [r for r in roots if out == r.resolve() or r.resolve() in out.parents]
    if inside:
        raise SystemExit(
            f"error: --out {args.out} is inside --runs {inside[0]}: --collect would gather the table directory's "
            "own records; write the tables outside the directories searched"
        )
    extras: dict = {}
    found = [p for name in ("results.json", "finetune.json") for p, _ in records(roots, name, select, extras)]
    folds = {p.resolve() for p, _ in fold_records(roots, select)}  # a cross-validation's runs: its own table
    if not found and not folds:
        refuse_empty(args.runs, extras)
    for src in sorted({*(p.resolve() for p in found), *folds}):
        collect(src, next(r.resolve() for r in roots if src.is_relative_to(r.resolve())), args.out / "runs")
    return {
        path: why
        for path, why in extras.items()
        if Path(path).resolve() not in folds and not kept_already(Path(path), roots, args.out / "runs")
    }


def kept_already(path: Path, roots: list[Path], kept: Path) -> bool:
    """Whether the table directory keeps this very record (the same bytes at the same place below its runs):
    its own extras list it once."""
    root = next((r for r in roots if path.is_relative_to(r)), None)
    twin = kept / path.relative_to(root) if root is not None else None
    return twin is not None and twin.is_file() and twin.read_bytes() == path.read_bytes()


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--runs",
        nargs="+",
        type=Path,
        default=None,
        help="directories searched (recursively) for results.json records (default: <out>/runs when --out "
        "holds a report.json, else outputs/runs)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("outputs/tables"),
        help="where the tables (.md .csv .tex) and figures are written (default: outputs/tables)",
    )
    ap.add_argument("--collect", action="store_true", help="copy results.json records into <out>/runs/")
    ap.add_argument(
        "--bilm",
        help="report the runs made with this biLM: a shipped one's name (small, small-v3, small-v2, small-v1) "
        "or a SHA-256 prefix; required when the records come from more than one",
    )
    ap.add_argument(
        "--accept",
        nargs="+",
        action="extend",  # --accept a b and --accept a --accept b alike
        default=[],
        metavar="KEY",
        help="keys (or prefixes, e.g. task.model) that may differ from what the profile prescribes, for "
        "runs made that way on purpose; the tables' footers name them",
    )
    ap.add_argument(
        "--split",
        choices=("dev", "test"),
        default="dev",
        help="test: add each run's test metric (scored once, with the model selected on dev) beside dev",
    )
    ap.add_argument(
        "--profile",
        help="report the runs of this run profile (e.g. quick, paper); required "
        "when the records come from more than one",
    )
    return ap


def main(argv=None) -> None:
    """Reads the options and builds the report; the table directory is left as it was unless all of it succeeds."""
    ap = parser()
    args = ap.parse_args(argv)
    given = {key for key in SETTINGS if getattr(args, key) != ap.get_default(key)}
    args.out = checked_out(args.out)
    with report_lock(args.out), unchanged_on_failure(args.out):
        build(args, given)


def build(args: argparse.Namespace, given: set[str]) -> None:
    """The report of ``main``'s options: checks, ``--collect``, then every table, figure and note."""
    forget_walks()  # one walk of each runs root per report (experiments.runs_index)
    made = made_before(args.out)  # what this report may remove: what the last one made
    stored_settings(args, given)
    refuse_other_runs(args)
    check_accepted(tuple(args.accept))
    roots = [r for r in args.runs if r.exists()]
    refuse_links_in_runs(roots)
    select = dataclasses.replace(choose(roots, args.profile, args.bilm), accepted=tuple(args.accept))
    refuse_other_tables(args.out, select)
    extras: dict = {}
    if args.collect:  # add the records to the directory's own, then report those (nothing written if none fits)
        extras = collect_into(args, roots, select)
        roots = [args.out / "runs"]
        forget_walks()  # the collected runs, walked as they are now
    options = (
        (f" --profile {args.profile}" if args.profile else "")
        + (f" --bilm {args.bilm}" if args.bilm else "")
        + (" --split test" if args.split == "test" else "")
        + "".join(f" --accept {k}" for k in args.accept)
    )
    target = TableDir(args.out, rebuild_command(args.out, roots, options), tuple(args.accept), made=made)
    runs, (probes, probe_sources) = load_runs(roots, select, extras), probes_table(roots, select, extras)
    df = runs[runs.encoder.isna()] if not runs.empty else runs  # Tables 1-3: the biLM's runs
    if (
        df.empty
        and probes.empty
        and not any(fold_run(r) for _, r in records(roots, "results.json", select))
        and not any(True for _ in records(roots, "finetune.json", select))  # Table 7's fine-tunings alone
    ):
        refuse_empty(args.runs, extras)
    args.out.mkdir(parents=True, exist_ok=True)
    target.files += write_extras(extras, args.out, made)
    test = args.split == "test"
    if test and not df.empty and df.test_value.isna().all():
        print("no record has a test metric (the data below --runs have no test file): the tables show dev only")
        test = False
    used = write_tables(ReportInputs(runs, df, roots, select, probes, probe_sources, test), target)
    if not df.empty:
        target.written += write_figures(df, args.out, made)
    target.files += [name for name in target.written if name.endswith(".png")]
    stored = {key: getattr(args, key) for key in SETTINGS} | {"runs": [str(r) for r in roots]}
    stored["made"] = sorted(set(target.files))  # what a later report into this folder may remove
    (args.out / "report.json").write_text(json.dumps(stored, indent=2) + "\n")
    n_task = df.path.nunique() if not df.empty else 0
    print(
        f"{n_task} task run records ({(runs.path.nunique() if not runs.empty else 0) - n_task} with a Transformer), "
        f"{len(probe_sources)} probe and {used.get('table7', 0)} fine-tuning records, "
        f"{len(extras)} extras -> {args.out}: {', '.join(target.written)}"
    )


def write_tables(inputs: ReportInputs, target: TableDir) -> dict[str, int]:
    """Every declared table (``declared_tables.TABLES``) that this report has rows for, rendered alike;
    the number of records behind each table written."""
    used = {}
    for table in TABLES:
        made = None if table.task_runs and inputs.df.empty else table.make(inputs)
        if made is not None:
            write_table(made[0], target, table.stem, table.caption, made[1], made[2], table.markdown)
            used[table.stem] = 0 if made[1] is None else len(made[1])
    return used


def disk_message(e: OSError) -> str:
    reason = {errno.ENOSPC: "disk full", errno.EROFS: "read-only file system", errno.EACCES: "permission denied"}
    return f"{e.filename or ''}: {reason.get(e.errno, e.strerror or str(e))}; the table directory is unchanged"


if __name__ == "__main__":
    from suite_common.errors import SuiteError

    try:
        main()
    except SuiteError as e:  # an unreadable record: one line naming its file
        raise SystemExit(f"error: {e}") from None
    except OSError as e:  # a full or read-only disk: one line, nothing half written
        raise SystemExit(f"error: {disk_message(e)}") from None
