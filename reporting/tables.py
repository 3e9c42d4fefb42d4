"""The paper's tables as frames from the run frame (Peters et al. 2018, Table 1: baseline against ELMo
with the absolute gain and relative error reduction; Tables 2-3: the ablations beside the published
values; the biLM variants beside their plain setting): mean ± std over seeds, with n."""

from __future__ import annotations

import pandas as pd

from . import paper_numbers as paper


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
        rows.append(
            {
                "task": f"{task} ({info['metric']}; paper: {info['paper_dataset']})",
                "baseline (ours, dev)": cell(stats, task, "baseline"),
                "ELMo (ours, dev)": cell(stats, task, "elmo"),
                **(
                    {
                        "baseline (ours, test)": cell(test_stats, task, "baseline"),
                        "ELMo (ours, test)": cell(test_stats, task, "elmo"),
                    }
                    if test
                    else {}
                ),
                "increase: absolute / relative error reduction (ours)": f"{abs_gain} / {rel}",
                "paper baseline / ELMo (test)": f"{pb} / {pe}",
                "increase: absolute / relative error reduction (paper)": f"{p_abs} / {p_rel}",
            }
        )
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
