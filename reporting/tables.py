"""The paper's tables as frames from the run frame (Peters et al. 2018, Table 1: baseline against ELMo
with the absolute gain and relative error reduction; Tables 2-3: the ablations beside the published
values; the biLM variants beside their plain setting): per cell the mean over seeds with its 95 %
interval and n; per gain its 95 % interval over seeds and, where both arms' runs kept their
predictions, a paired bootstrap over dev examples with its interval and p-value (``uncertainty``)."""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from pathlib import Path

import pandas as pd

from experiments import paper_numbers as paper
from experiments.rescoring import NotRescored, RescoringFailed, rescore
from experiments.run_config import as_run

from .per_record import read as read_record
from .uncertainty import BootstrapResult, Interval, difference_interval, format_p, paired_bootstrap, seed_interval

NOT_DISTINGUISHABLE = "≈0"  # the mark of a gain whose interval contains zero
WHY_COLUMN = "why ours and the paper's differ"  # Table 1's last column


def summarize(df: pd.DataFrame, settings: list[str], column: str = "value") -> pd.DataFrame:
    """Mean, std and n of the dev metric (``column="test_value"``: the test metric of the same
    runs, each scored once with its dev-selected model) per (task, setting); missing cells stay missing."""
    sub = df[df.setting.isin(settings) & df.full]
    g = sub.dropna(subset=[column]).groupby(["task", "setting"])[column]
    return pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1), "n": g.count()}).reset_index()


def mean_std_n(m: float, s: float, n: int) -> str:
    """A variant's cell: mean ± sample std with the number of seeds; a missing cell says n=0."""
    if n == 0:
        return "— (n=0)"
    return f"{m:.2f} ± {s:.2f} (n={n})" if n > 1 else f"{m:.2f} (n=1)"


def interval_text(i: Interval, signed: bool = False) -> str:
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"[{f.format(i.low)}, {f.format(i.high)}]"


def mean_interval_n(values) -> str:
    """A table cell: the mean over seeds with its 95 % interval and the number of seeds. Every metric of
    the tables is a percentage: a t interval over few seeds that reaches past 0 or 100 is shown clipped
    to them, and says so."""
    values = list(values)
    if not values:
        return "— (n=0)"
    i = seed_interval(values)
    mean = sum(values) / len(values)
    if not i:
        return f"{mean:.2f} (n=1)"
    if i.low >= 0 and i.high <= 100:
        return f"{mean:.2f} {interval_text(i)} (n={len(values)})"
    clipped = dataclasses.replace(i, low=max(i.low, 0.0), high=min(i.high, 100.0))
    return f"{mean:.2f} {interval_text(clipped)} (n={len(values)}; interval clipped to 0-100)"


def cell_values(df: pd.DataFrame, task: str, setting: str, column: str = "value") -> pd.DataFrame:
    rows = df[(df.task == task) & (df.setting == setting) & df.full]
    return rows.dropna(subset=[column])


def cell(df: pd.DataFrame, task: str, setting: str, column: str = "value") -> str:
    return mean_interval_n(cell_values(df, task, setting, column)[column])


@cache
def _unit_counts(path: str):
    try:
        return rescore(read_record(Path(path)))
    except (NotRescored, RescoringFailed):
        return None


def bootstrap(reference: pd.DataFrame, other: pd.DataFrame) -> BootstrapResult | None:
    """The paired bootstrap of two cells' runs over dev examples, when every run of both kept its
    predictions (a cell partly made of older records has seed intervals only)."""
    ref = [_unit_counts(p) for p in reference.path]
    oth = [_unit_counts(p) for p in other.path]
    if not ref or not oth or any(r is None for r in [*ref, *oth]):
        return None
    return paired_bootstrap([r.counts for r in ref], [r.counts for r in oth], ref[0].metric_of_sums)


def gain_columns(
    reference: pd.DataFrame, other: pd.DataFrame, task: str, label: str = "", with_gain: bool = False
) -> dict[str, str]:
    """A gain's uncertainty: its 95 % interval over seeds (``with_gain``: after the gain itself), and
    its paired bootstrap over dev examples (interval and p-value); a gain neither can tell from zero
    is marked ``≈0``."""
    if not len(reference) or not len(other):
        return {f"{label}gain [95% interval over seeds]" if with_gain else f"{label}95% interval over seeds": "—",
                f"{label}paired bootstrap over dev examples: 95% interval, p": "—"}  # fmt: skip
    seeds = difference_interval(reference.value, other.value)
    boot = bootstrap(reference, other)
    if boot is not None:
        real = boot.significant
    elif seeds is not None:
        real = seeds.excludes_zero()
    else:
        real = None
    mark = "" if real is None or real else f" {NOT_DISTINGUISHABLE}"
    gain = f"{other.value.mean() - reference.value.mean():+.2f} " if with_gain else ""
    return {
        f"{label}gain [95% interval over seeds]" if with_gain else f"{label}95% interval over seeds": gain
        + (interval_text(seeds, True) if seeds else "(n<2)" if with_gain else "— (n<2)")
        + mark,
        f"{label}paired bootstrap over dev examples: 95% interval, p": (
            f"{interval_text(boot.gain, True)}, {format_p(boot.p_value)}" if boot else "— (not re-scored)"
        ),
    }


def mean_of(stats, task, setting):
    row = stats[(stats.task == task) & (stats.setting == setting)]
    return None if row.empty else float(row.iloc[0]["mean"])


def gains(base: float | None, elmo: float | None) -> tuple[str, str]:
    """Absolute gain and relative error reduction (paper Table 1's 'increase' columns)."""
    if base is None or elmo is None:
        return "—", "—"
    return f"{elmo - base:+.2f}", f"{100 * (elmo - base) / (100 - base):.1f}%"


def table1_rows(df: pd.DataFrame):
    """(row, its metric and the paper's data set) of Table 1: each task with runs, in the paper's order, then
    its runs on other data sets chosen by name (``ner (wnut17)``: rows beyond the paper)."""
    present = set(df.task)
    for task, info in paper.TASKS.items():
        if task in present:
            yield task, info
        named = set(df[df.task_name == task].task) if "task_name" in df else set()
        for other in sorted((named | {t for t in present if t.startswith(f"{task} (")}) - {task}):
            yield other, {**info, "paper_dataset": "—"}


def table1(df: pd.DataFrame, test: bool = False) -> pd.DataFrame:
    stats = summarize(df, ["baseline", "elmo"])
    rows = []
    for task, info in table1_rows(df):
        b, e = mean_of(stats, task, "baseline"), mean_of(stats, task, "elmo")
        pb, pe = paper.TABLE1.get(task, (None, None))
        abs_gain, rel = gains(b, e)
        p_abs, p_rel = gains(pb, pe)
        rows.append(
            {
                "task": f"{task} ({info['metric']}; paper: {info['paper_dataset']})",
                "baseline (ours, dev)": cell(df, task, "baseline"),
                "ELMo (ours, dev)": cell(df, task, "elmo"),
                **(
                    {
                        "baseline (ours, test)": cell(df, task, "baseline", "test_value"),
                        "ELMo (ours, test)": cell(df, task, "elmo", "test_value"),
                    }
                    if test
                    else {}
                ),
                "increase: absolute / relative error reduction (ours)": f"{abs_gain} / {rel}",
                **gain_columns(cell_values(df, task, "baseline"), cell_values(df, task, "elmo"), task, "increase: "),
                "paper baseline / ELMo (test)": f"{pb} / {pe}" if pb is not None else "—",
                "increase: absolute / relative error reduction (paper)": f"{p_abs} / {p_rel}",
                WHY_COLUMN: comparability_notes(df, task),
            }
        )
    return pd.DataFrame(rows)


def table1_markdown(frame: pd.DataFrame) -> str:
    """Table 1 as a terminal shows it: per task the two cells (mean and seeds), the gain with its 95 % interval
    over seeds, the paired bootstrap's p and the paper's gain; then the details table (every interval, the
    error reductions, the paper's numbers) and why ours and the paper's differ. The .csv and .tex keep
    every column in one table."""
    short = frame.task.str.replace(r" \(([^;()]+); paper: .*\)$", r" (\1)", regex=True)
    seeds = frame.filter(like="interval over seeds").iloc[:, 0]
    boot = frame.filter(like="paired bootstrap").iloc[:, 0]
    main = pd.DataFrame(
        {
            "task (metric)": short,
            "baseline": frame["baseline (ours, dev)"].map(_mean_and_n),
            "ELMo": frame["ELMo (ours, dev)"].map(_mean_and_n),
            "gain [seeds 95%]": [
                _gain_text(ours.split(" / ")[0], interval)
                for ours, interval in zip(frame["increase: absolute / relative error reduction (ours)"], seeds)
            ],
            "bootstrap [95%], p": [b.replace("], p", "] p") if b.startswith("[") else "—" for b in boot],
            "paper": frame["increase: absolute / relative error reduction (paper)"].str.split(" / ").str[0],
        }
    )
    details = frame.drop(columns=[WHY_COLUMN, seeds.name]).rename(columns=DETAILS_HEADERS)
    why = "\n".join(f"- {task}: {text}" for task, text in zip(short, frame[WHY_COLUMN]) if text != "—")
    return (
        f"{main.to_markdown(index=False, disable_numparse=True)}\n\n## Details\n\n"
        f"{details.to_markdown(index=False, disable_numparse=True)}"
        + (f"\n\nWhy ours and the paper's differ:\n\n{why}" if why else "")
    )


DETAILS_HEADERS = {  # Table 1's columns as its .md's details table names them (the .csv keeps the long names)
    "baseline (ours, dev)": "baseline (dev)",
    "ELMo (ours, dev)": "ELMo (dev)",
    "increase: absolute / relative error reduction (ours)": "gain / error reduction",
    "increase: paired bootstrap over dev examples: 95% interval, p": "paired bootstrap: 95% interval, p",
    "paper baseline / ELMo (test)": "paper (test)",
    "increase: absolute / relative error reduction (paper)": "paper gain / error reduction",
}


def _gain_text(gain: str, interval: str) -> str:
    return "—" if gain == "—" else f"{gain} {interval.removeprefix('— ')}"


def _mean_and_n(text: str) -> str:
    """A cell without its interval: ``82.94 [82.31, 83.57] (n=3)`` -> ``82.94 (n=3)``."""
    return re.sub(r" \[[^\]]*\]", "", text).replace("; interval clipped to 0-100", "")


def _per_class_accuracy(path: str) -> dict:
    """A run's dev accuracy per gold class: from its kept predictions where it has them (so runs recorded
    before their task scored classes are checked too), else as recorded."""
    rescored = _unit_counts(path)
    if rescored is not None and rescored.per_class is not None:
        return rescored.per_class
    return (read_record(Path(path)).dev or {}).get("per_class_accuracy") or {}


def comparability_notes(df: pd.DataFrame, task: str) -> str:
    """What keeps a Table 1 row from being read against the paper's, from the row's own data and runs:
    other data than the paper's (``paper.DATA_NOTES``), a cell of one seed (no interval), and runs
    that never predict a class (a dev accuracy of 0 for it: a stalled run)."""
    notes = [paper.DATA_NOTES[task]] if task in paper.DATA_NOTES else []
    used = pd.concat([cell_values(df, task, s) for s in ("baseline", "elmo")])
    if "data_note" in used:  # a data set's own note (conf/data/<name>.yaml)
        notes += sorted({str(n) for n in used.data_note.dropna()})
    profile = used.profile.iloc[0] if "profile" in used and not used.empty else None
    if "fraction" in used and not used.empty and (used.fraction < profile_fraction(task, profile)).any():
        # the data note names the whole training set (or the profile's share of it): these cells had less
        examples = sorted({int(n) for n in used.get("train_examples", pd.Series()).dropna()})
        shown = ", ".join(f"{n:,}" for n in examples) or "?"
        fractions = ", ".join(f"{f:.0%}" if f >= 0.01 else f"{f:.1%}" for f in sorted(set(used.fraction)))
        notes.append(f"these cells trained on {fractions} of the training data ({shown} training examples)")
    for setting, name in (("baseline", "baseline"), ("elmo", "ELMo")):
        runs = cell_values(df, task, setting)
        if len(runs) == 1:
            notes.append(f"{name}: one seed, no interval")
        stalled: dict[str, int] = {}
        for path in runs.path:
            for label, accuracy in _per_class_accuracy(path).items():
                if accuracy == 0:
                    stalled[label] = stalled.get(label, 0) + 1
        for label, count in sorted(stalled.items()):
            notes.append(f"{name}: '{label}' never predicted right in {count} of {len(runs)} runs (stalled)")
    return "; ".join(notes) or "—"


def profile_fraction(task: str, profile: str | None) -> float:
    """The share of the training data the task's profile trains on (the quick SQuAD: 10 %)."""
    from .cell_rules import composed

    try:
        choices = (f"task={task}", "source=local", *([f"profile={profile}"] if profile else []))
        return float(as_run(composed(choices)).data.fraction)
    except Exception:  # a task or profile that does not compose here (a record from another checkout)
        return 1.0


def row_tasks(df: pd.DataFrame, settings: list[str]) -> set[str]:
    """The tasks an ablation table has a row for: those its settings were run for (a run launched as one
    of them, or matched to one by its configuration alone), not those whose only runs are Table 1's
    filling a cell whose configuration they also are."""
    own = df[df.setting.isin(settings) & (df.setting != "baseline") & df.full].dropna(subset=["value"])
    if "launched_as" in own:
        own = own[own.launched_as.isna() | (own.launched_as == own.setting)]
    return set(own.task)


def ablation_table(df: pd.DataFrame, published: dict, settings: list[str], test: bool = False) -> pd.DataFrame:
    """The paper's tasks first, then any other task with runs in these settings (paper: —); each
    setting after the first is also given as a gain over the first (the table's reference row)."""
    rows = []
    reference = settings[0]
    with_runs = row_tasks(df, settings)
    for task in [*published, *(t for t in paper.TASKS if t not in published)]:
        if task not in with_runs:
            continue
        row = {"task": task}
        for s in settings:
            row[f"{s} (ours)"] = cell(df, task, s)
            if test:
                row[f"{s} (ours, test)"] = cell(df, task, s, "test_value")
            row[f"{s} (paper)"] = published.get(task, {}).get(s, "—")
        for s in settings[1:]:
            ref, other = cell_values(df, task, reference), cell_values(df, task, s)
            columns = gain_columns(ref, other, task, f"{s} − {reference}: ", with_gain=True)
            row.update(columns if len(ref) and len(other) else dict.fromkeys(columns, "—"))
        rows.append(row)
    return pd.DataFrame(rows)


def variants_table(df: pd.DataFrame) -> pd.DataFrame:
    """Each variant run (state policy, fine-tuned biLM) beside its plain setting, same tasks."""
    full = df[df.full]
    rows = []
    for (task, setting), g in full[full.setting.str.contains("+", regex=False)].groupby(["task", "setting"]):
        base = setting.split("+")[0]
        plain = full[(full.task == task) & (full.setting == base)]
        same_seeds = plain[plain.seed.isin(g.seed)]
        fmt = lambda v: mean_std_n(v.mean(), v.std(ddof=1), len(v))  # noqa: E731
        rows.append(
            {
                "task": task,
                "setting": base,
                "variant": setting.split("+", 1)[1],
                "variant (ours)": fmt(g.value),
                "plain, same seeds": fmt(same_seeds.value),
                "plain, all seeds": fmt(plain.value),
                "difference, same seeds": f"{g.value.mean() - same_seeds.value.mean():+.2f} points"
                if len(same_seeds)
                else "—",
                "biLM dev perplexity before → after": ", ".join(sorted(set(g.finetune_ppl.dropna()))) or "—",
            }
        )
    return pd.DataFrame(rows)


UNCERTAINTY_NOTE = (
    "How to read the intervals: a cell is the mean over seeds with its 95 % t interval [low, high]. A gain "
    "(ELMo − baseline in Table 1; each setting − the first one in Tables 2-3) has its 95 % interval over "
    "seeds (Welch) and, where every run of both cells kept its predictions, a paired bootstrap over the dev "
    "examples (10,000 draws of sentences for NER, SRL and SST, questions for SQuAD, pairs for entailment, "
    "documents for coreference; both arms scored on the same draw, the metric recomputed over the drawn units; "
    "fixed seed) with its 95 % interval and two-sided p-value. The seed interval asks whether another set of "
    f"seeds would give the gain; the bootstrap asks whether another dev set would. {NOT_DISTINGUISHABLE}: "
    "not distinguishable from zero at 5 % (by the bootstrap where there is one, else by the seeds)."
)


def rescoring_note(
    sources: pd.DataFrame, unchecked: str = "made before predictions were kept: seed intervals only"
) -> str:
    """How many of a table's records were re-scored from their predictions (``unchecked``: what the others are)."""
    paths = sorted(set(sources.path))
    done = sum(_unit_counts(p) is not None for p in paths)
    line = f"Re-scored from their kept predictions: {done} of {len(paths)} records"
    if done < len(paths):
        line += f"; {len(paths) - done} not re-scored ({unchecked})"
    return line + "."
