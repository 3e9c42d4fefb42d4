"""Tables and figures of the paper from run records (Peters et al. 2018, Tables 1-3, Figures 1-2).

    python -m reporting.report [--runs outputs/runs results/runs] [--out results] [--collect] [--profile P] [--bilm B]

Reads every ``results.json`` below the given directories into a pandas frame (one row per run;
identical configurations counted once), then writes ``table1/2/3.{md,csv,tex}`` with mean ± std
over seeds, the number of seeds, and the paper's number beside ours, plus ``layer_weights_<biLM>_<profile>.png``
(Figure 2) and ``sample_efficiency_<biLM>_<profile>.png`` (Figure 1). ``--collect`` also copies each run's
``results.json`` into ``<out>/runs/`` so that committed tables can be rebuilt anywhere. Runs of
different profiles (``quick``, ``paper``) or different biLMs are never mixed: with several present,
``--profile`` and ``--bilm`` say which to report (runs without ELMo go with any biLM).
Our numbers are dev-set numbers on the data of this suite (see results/README.md).
"""
from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tasks.run_record import Record

from . import paper_numbers as paper
from .cell_rules import describe, differences
from .encoders_report import NOTES as ENCODER_NOTES, encoders_table, probes_by_encoder
from .figures import bilm_name, figure_name, layer_weights_figure, sample_efficiency_figure, shipped_bilms


@dataclass(frozen=True)
class Selection:
    """Which records one set of tables reports: one run profile and one biLM (by SHA-256). Runs
    without ELMo (baselines) do not depend on the biLM and go with any."""
    profile: str | None = None
    bilm: str | None = None

    def admits(self, r: Record) -> bool:
        return ((self.profile is None or r.profile == self.profile)
                and (self.bilm is None or r.bilm_sha256 in (None, self.bilm)))


ACCEPTED: tuple[str, ...] = ()  # keys that may differ from the profile's prescription (--accept)


def records(roots: list[Path], name: str, select: Selection | None = None, extras: dict | None = None):
    """``(path, Record)`` for every ``name`` file below ``roots`` that ``select`` admits. With
    ``extras`` given, only records that may join a table cell (``cell_rules``); the others go into
    ``extras`` (path -> (record, differing keys))."""
    for root in roots:
        for path in sorted(Path(root).glob(f"**/{name}")):
            r = Record.read(path)
            if select is None or select.admits(r):
                if extras is not None and name == "results.json":
                    diff = differences(r, ACCEPTED)
                    if diff:
                        extras[str(path)] = (r, diff)
                        continue
                yield path, r


def _counted(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def choose(roots: list[Path], profile: str | None, bilm: str | None) -> Selection:
    """The records to report: the requested profile and biLM (a SHA-256 prefix or the name of a
    shipped biLM); with none requested, the one the records share. Runs of different profiles or
    different biLMs are never averaged into the same cell: with several present and none
    requested, this is an error."""
    found = [r for name in ("results.json", "finetune.json") for _, r in records(roots, name)]
    profiles = _counted(str(r.profile or "(none recorded)") for r in found)
    listed = ", ".join(f"{k} ({v} records)" for k, v in sorted(profiles.items())) or "no records"
    if profile is not None and profile not in profiles:
        raise SystemExit(f"error: no runs with profile {profile!r}; found: {listed}")
    if profile is None and len(profiles) > 1:
        raise SystemExit(f"error: the runs come from several profiles: {listed}. Their numbers are not "
                         f"comparable; pass --profile NAME to report one of them.")
    shipped = shipped_bilms()
    bilms = _counted(r.bilm_sha256 for r in found if (profile is None or r.profile == profile) and r.bilm_sha256)
    listed = ", ".join(f"{bilm_name(k, shipped)} ({v} records)" for k, v in sorted(bilms.items())) or "none"
    if bilm is not None:
        wanted = [sha for sha, name in shipped.items() if name == bilm] or [k for k in bilms if k.startswith(bilm)]
        if len(wanted) != 1:
            raise SystemExit(f"error: --bilm {bilm} matches {len(wanted)} biLMs; found: {listed}")
        return Selection(profile, wanted[0])
    if len(bilms) > 1:
        raise SystemExit(f"error: the runs use several biLMs: {listed}. Their numbers are not comparable; "
                         f"pass --bilm NAME|SHA to report one of them.")
    return Selection(profile, next(iter(bilms), None))


def probes_table(roots: list[Path], select: Selection | None = None,
                 extras: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-layer probe accuracy (mean over runs) with the paper's Tables 5-6 beside it, and the records."""
    rows = []
    for _, r in records(roots, "results.json", select, extras):
        if r.task in paper.PROBES:
            for layer, acc in r.dev["accuracy_per_layer"].items():
                rows.append({"probe": r.task, "layer": layer, "accuracy": acc, "key": r.config_hash,
                             "encoder": r.encoder, **provenance_fields(r)})
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    df = pd.DataFrame(rows).drop_duplicates(["probe", "layer", "key"])
    df = df[df.encoder.isna()]  # a Transformer's layers are reported beside the biLM's in encoders.md
    if df.empty:
        return pd.DataFrame(), pd.DataFrame()
    out = df.groupby(["probe", "layer"])["accuracy"].agg(["mean", "count"]).reset_index()
    out["ours"] = [f"{m:.2f} (n={n})" for m, n in zip(out["mean"], out["count"])]
    out["paper"] = [paper.PROBES[p].get(l, "—") for p, l in zip(out.probe, out.layer)]
    return out[["probe", "layer", "ours", "paper"]], df.drop_duplicates("key")


def table7(roots: list[Path], select: Selection | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 7's biLM half: dev perplexity before -> after fine-tuning on the task text (``mode=finetune``)."""
    rows = []
    for _, r in records(roots, "finetune.json", select):
        ft = r.bilm_finetune
        rows.append({"task": r.task, "biLM tokens of fine-tuning": ft["tokens"],
                     "dev perplexity before → after (ours)": finetune_perplexities(ft),
                     "paper (Table 7)": paper.TABLE7.get(r.task, "—"), "key": ft["dir"], **provenance_fields(r)})
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    df = pd.DataFrame(rows).drop_duplicates("key")
    order = {t: k for k, t in enumerate(paper.TASKS)}
    df = df.sort_values("task", key=lambda c: c.map(order))
    return df[["task", "biLM tokens of fine-tuning", "dev perplexity before → after (ours)", "paper (Table 7)"]], df


def finetune_perplexities(info: dict | None) -> str | None:
    return f"{info['dev_perplexity_before']:.1f} → {info['dev_perplexity_after']:.1f}" if info else None


def load_runs(roots: list[Path], select: Selection | None = None, extras: dict | None = None) -> pd.DataFrame:
    rows, seen = [], set()
    found = sorted(records(roots, "results.json", select, extras), key=lambda pr: str(pr[1].date))
    for path, r in found:  # the earliest record of a configuration counts; later reruns of it do not
        if r.task in paper.PROBES:
            continue  # reported by probes_table
        key = (r.config_hash or str(path), r.setting)  # one run may serve several settings
        if key in seen:
            continue
        seen.add(key)
        mix = r.mixing_weights or {}
        rows.append({"task": r.task, "metric": r.metric, "value": r.value,
                     "test_value": np.nan if r.test_value is None else r.test_value,
                     "seed": r.seed, "setting": r.setting, "fraction": r.fraction, "path": str(path),
                     "equal_updates": r.equal_updates,
                     "s_input": mix.get("input", {}).get("s"), "s_output": mix.get("output", {}).get("s"),
                     "finetune_ppl": finetune_perplexities(r.bilm_finetune), "encoder": r.encoder,
                     **provenance_fields(r)})
    df = pd.DataFrame(rows)
    if not df.empty:  # tables use each task's largest training set (a quick profile may train on a subset)
        df["full"] = df.fraction == df.groupby("task").fraction.transform("max")
    return df


def summarize(df: pd.DataFrame, settings: list[str], column: str = "value") -> pd.DataFrame:
    """Mean, std and n of the dev metric (``column="test_value"``: the test metric of the same
    runs, each scored once with its dev-selected model) per (task, setting); missing cells stay missing."""
    sub = df[df.setting.isin(settings) & df.full]
    g = sub.dropna(subset=[column]).groupby(["task", "setting"])[column]
    return pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1), "n": g.count()}).reset_index()


def mean_std_n(m: float, s: float, n: int) -> str:
    """A table cell: mean ± sample std with the number of seeds; a missing cell says n=0."""
    if n == 0:
        return "— (n=0)"
    return f"{m:.2f} ± {s:.2f} (n={n})" if n > 1 else f"{m:.2f} (n=1)"


def cell(stats: pd.DataFrame, task: str, setting: str) -> str:
    row = stats[(stats.task == task) & (stats.setting == setting)]
    if row.empty:
        return mean_std_n(0.0, 0.0, 0)
    return mean_std_n(row.iloc[0]["mean"], row.iloc[0]["std"], int(row.iloc[0]["n"]))


def mean_of(stats, task, setting):
    row = stats[(stats.task == task) & (stats.setting == setting)]
    return None if row.empty else float(row.iloc[0]["mean"])


def gains(base: float | None, elmo: float | None) -> tuple[str, str]:
    """Absolute gain and relative error reduction (paper Table 1's 'increase' columns)."""
    if base is None or elmo is None:
        return "—", "—"
    return f"{elmo - base:+.2f}", f"{100 * (elmo - base) / (100 - base):.1f}%"


def table1(df: pd.DataFrame, test: bool = False) -> pd.DataFrame:
    stats = summarize(df, ["baseline", "elmo"])
    test_stats = summarize(df, ["baseline", "elmo"], "test_value") if test else None
    rows = []
    for task, info in paper.TASKS.items():
        if task not in set(df.task):
            continue
        b, e = mean_of(stats, task, "baseline"), mean_of(stats, task, "elmo")
        pb, pe = paper.TABLE1[task]
        abs_gain, rel = gains(b, e)
        p_abs, p_rel = gains(pb, pe)
        rows.append({"task": f"{task} ({info['metric']}; paper: {info['paper_dataset']})",
                     "baseline (ours, dev)": cell(stats, task, "baseline"),
                     "ELMo (ours, dev)": cell(stats, task, "elmo"),
                     **({"baseline (ours, test)": cell(test_stats, task, "baseline"),
                         "ELMo (ours, test)": cell(test_stats, task, "elmo")} if test else {}),
                     "increase: absolute / relative error reduction (ours)": f"{abs_gain} / {rel}",
                     "paper baseline / ELMo (test)": f"{pb} / {pe}",
                     "increase: absolute / relative error reduction (paper)": f"{p_abs} / {p_rel}"})
    return pd.DataFrame(rows)


def ablation_table(df: pd.DataFrame, published: dict, settings: list[str], test: bool = False) -> pd.DataFrame:
    """The paper's tasks first, then any other task with runs in these settings (paper: —)."""
    stats = summarize(df, settings)
    test_stats = summarize(df, settings, "test_value") if test else None
    rows = []
    with_runs = set(stats[stats.setting != "baseline"].task)
    for task in [*published, *(t for t in paper.TASKS if t not in published)]:
        if task not in with_runs:
            continue
        row = {"task": task}
        for s in settings:
            row[f"{s} (ours)"] = cell(stats, task, s)
            if test:
                row[f"{s} (ours, test)"] = cell(test_stats, task, s)
            row[f"{s} (paper)"] = published.get(task, {}).get(s, "—")
        rows.append(row)
    return pd.DataFrame(rows)


def provenance_fields(r: Record) -> dict:
    hw = r.hardware or {}
    return {"command": r.command, "date": r.date, "profile": r.profile, "bilm_sha256": r.bilm_sha256,
            "hardware": f"{hw.get('machine', '?')}, {hw.get('cpus', '?')} CPUs, {hw.get('torch_threads', '?')} torch "
                        f"thread(s), {hw.get('device', '?')}" + (f" ({hw['gpu']})" if hw.get("gpu") else "")}


def rebuild_command(out: Path, runs: list[Path] | None = None, options: str = "") -> str:
    """The command that rebuilds a table directory: from the records it was made from (``runs``;
    default: those kept beside it, ``<out>/runs``), with the same selection ``options``."""
    extra = "" if out == Path("results") else f" --out {out}"
    return f"python -m reporting.report --runs {' '.join(map(str, runs or [out / 'runs']))}{extra}{options}"


REBUILD: dict[Path, str] = {}  # out directory -> its rebuild command, set by main() for the footers
WRITTEN: list[str] = []  # the tables and figures this report wrote (for its last line)


def provenance(sources: pd.DataFrame | None, out: Path = Path("results")) -> str:
    """Which commands, on which hardware and when, made the records behind a table."""
    if sources is None or sources.empty:
        return ""
    dates = sorted(sources.date)
    shipped = shipped_bilms()
    used = sorted(set(sources.bilm_sha256.dropna())) if "bilm_sha256" in sources else []
    lines = ["", "## Produced by", "",
             f"{len(sources)} run records, {dates[0]} to {dates[-1]}; hardware: {'; '.join(sorted(set(sources.hardware)))}.",
             f"biLM: {', '.join(bilm_name(sha, shipped) for sha in used) or 'none (no ELMo runs)'}; runs without ELMo "
             "do not depend on it.",
             "Commands (Hydra multiruns; each record's `run_dir` names its own overrides):", ""]
    lines += [f"- `{cmd}` ({n} run{'s' if n > 1 else ''})" for cmd, n in sources.command.value_counts().sort_index().items()]
    lines += ["", f"Rebuilt from the records with `{REBUILD.get(out) or rebuild_command(out)}`."]
    return "\n".join(lines) + "\n"


def variants_table(df: pd.DataFrame) -> pd.DataFrame:
    """Each variant run (state policy, fine-tuned biLM) beside its plain setting, same tasks."""
    full = df[df.full]
    rows = []
    for (task, setting), g in full[full.setting.str.contains("+", regex=False)].groupby(["task", "setting"]):
        base = setting.split("+")[0]
        plain = full[(full.task == task) & (full.setting == base)]
        same_seeds = plain[plain.seed.isin(g.seed)]
        fmt = lambda v: mean_std_n(v.mean(), v.std(ddof=1), len(v))  # noqa: E731
        rows.append({"task": task, "setting": base, "variant": setting.split("+", 1)[1], "variant (ours)": fmt(g.value),
                     "plain, same seeds": fmt(same_seeds.value), "plain, all seeds": fmt(plain.value),
                     "difference, same seeds": f"{g.value.mean() - same_seeds.value.mean():+.2f} points" if len(same_seeds)
                     else "—", "biLM dev perplexity before → after": ", ".join(sorted(set(g.finetune_ppl.dropna()))) or "—"})
    return pd.DataFrame(rows)


def write_table(frame: pd.DataFrame, out: Path, name: str, title: str, sources: pd.DataFrame | None = None,
                notes: str = "") -> None:
    profiles = sorted(set(sources.profile.dropna())) if sources is not None and "profile" in sources else []
    if profiles:
        title += f" — {', '.join(profiles)} profile"
    if ACCEPTED:
        title += f" (runs may differ from it in: {', '.join(ACCEPTED)})"
    frame.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.md").write_text(f"# {title}\n\n" + (frame.to_markdown(index=False) if len(frame) else "(no runs)")
                                    + "\n" + (f"\n{notes}\n" if notes else "") + provenance(sources, out))
    (out / f"{name}.tex").write_text(frame.to_latex(index=False) if len(frame) else "% no runs\n")
    WRITTEN.append(f"{name}.md")


def write_encoders(runs: pd.DataFrame, roots: list[Path], select: Selection, out: Path) -> None:
    """``encoders.md``: baseline / ELMo / each Transformer per task, and the probes per layer of each."""
    table, sources = encoders_table(runs)
    if table.empty:
        return
    rows = [r for _, r in records(roots, "results.json", select, {}) if r.task in paper.PROBES]
    probes = pd.DataFrame([{"probe": r.task, "layer": layer, "accuracy": acc, "encoder": r.encoder}
                           for r in rows for layer, acc in r.dev["accuracy_per_layer"].items()])
    by_layer = probes_by_encoder(probes) if not probes.empty else pd.DataFrame()
    notes = ENCODER_NOTES + ("\n\n## Probes per layer (POS accuracy, WSD 1-NN accuracy)\n\n" + by_layer.to_markdown(index=False)
                             if not by_layer.empty else "")
    write_table(table, out, "encoders", "Encoders: baseline / ELMo (biLM) / BERT (Transformer), same heads (dev)",
                sources, notes)


def collect(src: Path, root: Path, dest_root: Path) -> Path:
    """Copy one record to the same place below ``dest_root``; a record of another identity already
    there is kept, and this one goes to ``<dir>@<digest>`` beside it (as ``run.py`` does)."""
    from tasks.run_records import record_dir
    dest = dest_root / src.relative_to(root)
    if src.resolve() == dest.resolve():
        return dest
    digest = Record.read(src).digest()
    if digest:
        dest = record_dir(dest.parent, digest, src.name) / src.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return dest


def refuse_other_tables(out: Path, select: Selection) -> None:
    """Tables are only ever rewritten for the profile and biLM whose records are kept beside them
    (``<out>/runs``): another biLM's or profile's tables need their own ``--out``."""
    kept = [r for _, r in records([out / "runs"], "results.json")] if (out / "runs").is_dir() else []
    other = [r for r in kept if not select.admits(r)]
    if other:
        shipped = shipped_bilms()
        found = sorted({f"profile {r.profile}, biLM {bilm_name(r.bilm_sha256, shipped) if r.bilm_sha256 else '-'}"
                        for r in other})
        raise SystemExit(f"error: {out} holds the tables of other runs ({'; '.join(found)}: {out / 'runs'}); "
                         f"write these with another --out")


def write_extras(extras: dict, out: Path) -> None:
    """``extras.md``: records left out of every cell because their configuration is not what their
    profile prescribes (``cell_rules``), each with the keys that differ."""
    path = out / "extras.md"
    if not extras:
        path.unlink(missing_ok=True)
        return
    lines = ["# Runs not in any table cell", "",
             "Their configuration differs from what their profile, task and ablation prescribe (`reporting/cell_rules.py`), "
             "so they are listed here and never averaged into a cell.", "",
             "| task | ablation | seed | dev | differs in | record |", "|---|---|---|---|---|---|"]
    for path_, (r, diff) in sorted(extras.items()):
        value = r.value
        lines.append(f"| {r.task} | {r.ablation or '-'} | {r.seed} "
                     f"| {f'{value:.2f}' if isinstance(value, (int, float)) else '-'} | {describe(diff)} | `{path_}` |")
    path.write_text("\n".join(lines) + "\n")
    print(f"{len(extras)} run(s) whose configuration differs from their profile's are listed apart in {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", type=Path, default=[Path("outputs/runs"), Path("results/runs")],
                    help="directories searched (recursively) for results.json records (default: outputs/runs results/runs)")
    ap.add_argument("--out", type=Path, default=Path("results"),
                    help="where the tables (.md .csv .tex) and figures are written (default: results)")
    ap.add_argument("--collect", action="store_true", help="copy results.json records into <out>/runs/")
    ap.add_argument("--bilm", help="report the runs made with this biLM: a shipped one's name (small, small-v1) "
                    "or a SHA-256 prefix; required when the records come from more than one")
    ap.add_argument("--accept", nargs="+", default=[], metavar="KEY",
                    help="keys (or prefixes, e.g. task.model) that may differ from what the profile prescribes, for "
                         "runs made that way on purpose; the tables' footers name them")
    ap.add_argument("--split", choices=("dev", "test"), default="dev",
                    help="test: add each run's test metric (scored once, with the model selected on dev) beside dev")
    ap.add_argument("--profile", help="report the runs of this run profile (e.g. quick, paper); required "
                    "when the records come from more than one")
    args = ap.parse_args(argv)
    global ACCEPTED
    ACCEPTED = tuple(args.accept)
    WRITTEN.clear()
    roots = [r for r in args.runs if r.exists()]
    select = choose(roots, args.profile, args.bilm)
    refuse_other_tables(args.out, select)
    args.out.mkdir(parents=True, exist_ok=True)
    options = (f" --profile {args.profile}" if args.profile else "") + (f" --bilm {args.bilm}" if args.bilm else "") \
        + (" --split test" if args.split == "test" else "") + "".join(f" --accept {k}" for k in args.accept)
    REBUILD[args.out] = rebuild_command(args.out, None if args.collect else args.runs, options)
    extras: dict = {}
    runs, (probes, probe_sources) = load_runs(roots, select, extras), probes_table(roots, select, extras)
    write_extras(extras, args.out)
    write_encoders(runs, roots, select, args.out)
    df = runs[runs.encoder.isna()] if not runs.empty else runs  # Tables 1-3: the biLM's runs
    if df.empty and probes.empty:
        if extras:
            raise SystemExit(f"error: every record below {', '.join(map(str, args.runs))} differs from what its profile "
                             f"prescribes ({len(extras)} listed in {args.out / 'extras.md'}); --accept KEY tables runs "
                             "made with such a key on purpose")
        raise SystemExit(f"error: no results.json under {', '.join(map(str, args.runs))}")
    if args.collect:
        for src in sorted(str(p) for name in ("results.json", "finetune.json") for p, _ in records(roots, name, select)
                          if str(p) not in extras):  # the records behind the tables, not the extras
            collect(Path(src), next(r for r in args.runs if Path(src).is_relative_to(r)), args.out / "runs")
    tuned, tuned_sources = table7(roots, select)
    if not tuned.empty:
        write_table(tuned, args.out, "table7", "Table 7 (biLM part): fine-tuning the biLM on each task's training text",
                    tuned_sources, "One epoch on the task's training text, labels ignored (`python run.py mode=finetune "
                    "task=<task> source=local data.fraction=1.0`); perplexity on the task's dev text, average of the "
                    "forward and backward perplexities. The paper's base biLM is the 1B Word Benchmark model; ours is "
                    "the embedded 12M-token biLM. The downstream effect is in `variants.md`.")
    if not probes.empty:
        notes = "\n".join(f"- {p}: {paper.PROBES[p]['note']}" for p in sorted(set(probes.probe)))
        write_table(probes, args.out, "probes", "Layer probes (Tables 5-6): accuracy per biLM layer", probe_sources,
                    "The data differ from the paper's:\n" + notes)
    if df.empty:
        print(f"{len(probe_sources)} probe records -> {args.out}: {', '.join(WRITTEN)}")
        return
    used = lambda settings: df[df.setting.isin(settings) & df.full]  # noqa: E731
    test = args.split == "test"
    if test and df.test_value.isna().all():
        print("no record has a test metric (the data below --runs have no test file): the tables show dev only")
        test = False
    write_table(table1(df, test), args.out, "table1", "Table 1: baseline vs ELMo (dev; paper: test)",
                used(["baseline", "elmo"]))
    table2_settings = ["baseline", "last_only", "all_lambda1", "all_lambda0.001"]
    write_table(ablation_table(df, paper.TABLE2, table2_settings, test), args.out, "table2", "Table 2: layer weighting (dev)",
                used(table2_settings))
    write_table(ablation_table(df, paper.TABLE3, ["input", "both", "output"], test), args.out, "table3",
                "Table 3: where ELMo goes (dev)", used(["input", "both", "output"]))
    variant_rows = df[df.setting.str.contains("+", regex=False)]
    if not variant_rows.empty:
        pairs = set(zip(variant_rows.task, variant_rows.setting.str.split("+").str[0]))
        base = df[[pair in pairs for pair in zip(df.task, df.setting)]]
        write_table(variants_table(df), args.out, "variants",
                    "biLM state policy and fine-tuned biLM (§3.4) against the plain setting (dev)",
                    pd.concat([variant_rows, base]))
    figures = {stem: figure_name(stem, df) for stem in ("layer_weights", "sample_efficiency")}
    for stem in figures:
        (args.out / f"{stem}.png").unlink(missing_ok=True)  # the name figures had before they named their runs
    layer_weights_figure(df, args.out / figures["layer_weights"])
    sample_efficiency_figure(df, args.out / figures["sample_efficiency"])
    WRITTEN.extend(figures.values())
    n_probe, n_tuned = len(probe_sources), len(tuned_sources)
    print(f"{len(df)} task runs (distinct configurations; {len(runs) - len(df)} with a Transformer), {n_probe} probe "
          f"and {n_tuned} fine-tuning records, {len(extras)} extras -> {args.out}: {', '.join(WRITTEN)}")


if __name__ == "__main__":
    from suite_common.errors import SuiteError
    try:
        main()
    except SuiteError as e:  # an unreadable record: one line naming its file
        raise SystemExit(f"error: {e}") from None
