"""The paper's figures from the report's run frame (Peters et al. 2018, Figure 1: sample efficiency;
Figure 2: the learned layer weights), written by ``python -m reporting.report``. Each figure names
the data, the biLM, the profile and the number of seeds of its runs, and its file name says whose
runs it shows.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments import paper_numbers as paper  # noqa: E402

from .uncertainty import seed_interval  # noqa: E402


def shipped_bilms() -> dict[str, str]:
    """SHA-256 -> name of the biLMs shipped in ``elmo_core/pretrained``."""
    from elmo_core import file_sha256
    from elmo_core.pretrained import ROOT

    return {file_sha256(d / "weights.hdf5"): d.name for d in sorted(ROOT.iterdir()) if (d / "weights.hdf5").exists()}


def bilm_name(sha: str, shipped: dict[str, str]) -> str:
    return f"{shipped[sha]} ({sha[:12]})" if sha in shipped else sha[:12]


def figure_name(stem: str, runs: pd.DataFrame) -> str:
    """A figure's file name says whose runs it shows: ``<stem>_<biLM>_<profile>.png`` (the shipped
    biLM's name or a SHA-256 prefix), so figures of two biLMs or profiles never look alike by name."""
    shipped = shipped_bilms()
    bilms = sorted(shipped.get(b, b[:12]) for b in set(runs.bilm_sha256.dropna())) if "bilm_sha256" in runs else []
    profiles = sorted(set(runs.profile.dropna())) if "profile" in runs else []
    return "_".join([stem, *(bilms or ["no-biLM"]), *profiles]) + ".png"


def figure_caption(runs: pd.DataFrame) -> str:
    """What a figure shows, for its own caption: the biLM(s) and the profile(s) of its runs."""
    shipped = shipped_bilms()
    bilms = sorted(set(runs.bilm_sha256.dropna())) if "bilm_sha256" in runs else []
    profiles = sorted(set(runs.profile.dropna())) if "profile" in runs else []
    return (
        f"biLM: {', '.join(bilm_name(b, shipped) for b in bilms) or '-'}; "
        f"{', '.join(profiles) or '-'} profile; dev sets"
    )


def layer_weights_figure(df: pd.DataFrame, path: Path) -> None:
    """Figure 2: mean softmax-normalized layer weights per task, input and output mixes, on a fixed
    colour scale from 0 to 1 (so equal weights look equal in every figure); as in the paper, a cell
    whose weight (as printed, two decimals) is below 1/3 is hatched and one above 2/3 dotted. Returns
    False (and writes nothing) when no run has learned weights."""
    elmo = df[(df.setting == "elmo") & df.full]
    if elmo[["s_input", "s_output"]].dropna(how="all").empty:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.6 * max(3, elmo.task.nunique()) + 1.9), gridspec_kw={"wspace": 0.9})
    low, high = 0.0, 1.0
    im = None
    for ax, col, title in zip(axes, ("s_input", "s_output"), ("Input layer", "Output layer")):
        ax.set_title(title)
        tasks = [t for t in paper.TASKS if not elmo[(elmo.task == t) & elmo[col].notna()].empty]
        if not tasks:
            ax.text(0.5, 0.5, "no runs with ELMo here", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        grid = np.array(
            [np.mean(np.array(elmo[(elmo.task == t) & elmo[col].notna()][col].tolist()), axis=0) for t in tasks]
        )
        im = ax.imshow(grid, vmin=low, vmax=high, cmap="Blues", aspect="auto")
        ax.set_xticks(range(grid.shape[1]), ["tokens"] + [f"LSTM {k}" for k in range(1, grid.shape[1])])
        n = [len(elmo[(elmo.task == t) & elmo[col].notna()]) for t in tasks]
        ax.set_yticks(range(len(tasks)), [f"{paper.OUR_DATA.get(t, t)} (n={k})" for t, k in zip(tasks, n)])
        for (i, j), v in np.ndenumerate(grid):
            shown = round(float(v), 2)  # marks follow the printed value: two cells labelled alike look alike
            ax.text(
                j,
                i,
                f"{shown:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if v > (low + high) / 2 else "black",
            )
            if shown < round(1 / 3, 2) or shown > round(2 / 3, 2):
                ax.add_patch(
                    plt.Rectangle(
                        (j - 0.5, i - 0.5),
                        1,
                        1,
                        fill=False,
                        lw=0,
                        hatch="///" if shown < 0.33 else "..",
                        edgecolor="gray",
                    )
                )
    if im is not None:
        fig.colorbar(
            im, ax=axes, shrink=0.8, label="softmax weight $s_j$, mean over n seeds\n(hatched < 1/3, dotted > 2/3)"
        )
    fig.suptitle(f"Learned layer weights (Figure 2) — {figure_caption(elmo)}", fontsize=9)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return True


def sample_efficiency_figure(df: pd.DataFrame, path: Path) -> None:
    """Figure 1: dev metric against training-set fraction, baseline vs ELMo: the mean over seeds
    (n per point in the legend), error bars the 95 % t interval over seeds that the tables show (none
    for a single seed). Returns False (and writes nothing) when no task has runs at several fractions."""
    sub = df[df.setting.isin(["baseline", "elmo"])]
    if "equal_updates" in sub:  # a task with equal-updates runs at small fractions shows only those there
        small = sub[sub.fraction < 1]
        ruled = set(small[small.equal_updates].task)
        sub = sub[~((sub.fraction < 1) & sub.task.isin(ruled) & ~sub.equal_updates)]
    tasks = [t for t in paper.TASKS if sub[(sub.task == t)].fraction.nunique() > 1]
    if not tasks:
        return False
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4.6 * max(1, len(tasks)), 3.4), squeeze=False)
    fig.subplots_adjust(wspace=0.35)
    for ax, task in zip(axes[0], tasks):
        for setting, style in (("baseline", "o--"), ("elmo", "s-")):
            g = sub[(sub.task == task) & (sub.setting == setting)].groupby("fraction")["value"]
            if len(g):
                m, n = g.mean(), g.count()
                spans = [seed_interval(list(v)) for _, v in g]  # clipped to 0-100, as the tables' cells
                low = [i.estimate - max(i.low, 0.0) if i else 0.0 for i in spans]
                high = [min(i.high, 100.0) - i.estimate if i else 0.0 for i in spans]
                seeds = f"n={n.min()}" if n.min() == n.max() else f"n={n.min()}-{n.max()}"
                ax.errorbar(
                    m.index * 100,
                    m.values,
                    yerr=[low, high],
                    fmt=style,
                    capsize=3,
                    label=f"{'ELMo' if setting == 'elmo' else 'baseline'} ({seeds})",
                )
        ax.set_xscale("log")
        fractions = sorted(sub[sub.task == task].fraction.unique())
        ax.set_xticks([100 * f for f in fractions], [f"{100 * f:g}%" for f in fractions])
        ax.minorticks_off()
        ax.set_xlabel("training data")
        ax.set_ylabel(f"dev {paper.TASKS[task]['metric']} (%)")
        ax.set_title(paper.OUR_DATA.get(task, task))
        ax.legend(fontsize=8)
    fig.suptitle(
        f"Sample efficiency (Figure 1) — {figure_caption(sub[sub.task.isin(tasks)])}; "
        "mean over seeds,\nerror bars its 95% t interval over seeds, clipped to 0-100 (as in the tables)",
        fontsize=9,
        y=1.07,
    )
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return True


def error_reduction_figure(df: pd.DataFrame, path: Path) -> bool:
    """Table 1 as a picture: per task, our relative error reduction (ELMo over the baseline, in % of
    the baseline's error) with its 95 % interval (the paired bootstrap over dev examples where every
    run kept its predictions, else the Welch interval over seeds scaled by the baseline's error),
    beside the paper's. Returns False (and writes nothing) when no task has both arms."""
    from .tables import bootstrap, cell_values
    from .uncertainty import difference_interval

    rows = []
    for task in paper.TASKS:
        base, elmo = cell_values(df, task, "baseline"), cell_values(df, task, "elmo")
        if base.empty or elmo.empty:
            continue
        b, e = base.value.mean(), elmo.value.mean()
        boot = bootstrap(base, elmo)
        if boot is not None:
            low, high, how = boot.relative.low, boot.relative.high, "bootstrap"
        else:
            seeds = difference_interval(base.value, elmo.value)
            low, high = (100 * seeds.low / (100 - b), 100 * seeds.high / (100 - b)) if seeds else (np.nan, np.nan)
            how = "seeds" if seeds else "n=1"
        pb, pe = paper.TABLE1.get(task, (np.nan, np.nan))  # a task the paper does not have: no published mark
        rows.append((task, 100 * (e - b) / (100 - b), low, high, how, 100 * (pe - pb) / (100 - pb)))
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 0.55 * len(rows) + 1.4))
    y = np.arange(len(rows))[::-1]
    for k, (_task, ours, low, high, how, published) in enumerate(rows):
        # a percentile interval need not hold the point of the seed means: an error bar is never negative
        err = [[max(0.0, ours - low)], [max(0.0, high - ours)]] if np.isfinite(low) else None
        ax.errorbar(ours, y[k] + 0.12, xerr=err, fmt="o", color="tab:blue", capsize=3,
                    label="ours, 95% interval" if k == 0 else None)  # fmt: skip
        ax.plot(published, y[k] - 0.12, "D", color="tab:orange", label="paper (test)" if k == 0 else None)
        ax.annotate(f"({how})", (max(ours, high if np.isfinite(high) else ours), y[k] + 0.12), xytext=(4, -3),
                    textcoords="offset points", fontsize=7, color="gray")  # fmt: skip
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(y, [f"{t} ({paper.OUR_DATA.get(t, t)})" for t, *_ in rows])
    ax.set_xlabel("relative error reduction of ELMo over the baseline (%)")
    ax.set_title(f"Table 1 gains with 95% intervals\n{figure_caption(df)}", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_figures(df: pd.DataFrame, out: Path, made: set[str] | None = None) -> list[str]:
    """Figures 1-2 and the error-reduction figure, named after their runs; a figure without runs is
    removed where the folder's last report made it (``made``). Returns the names written."""
    from .table_folder_guard import may_remove

    figures = {stem: figure_name(stem, df) for stem in ("layer_weights", "sample_efficiency", "error_reduction")}
    drawn = {"layer_weights": layer_weights_figure, "sample_efficiency": sample_efficiency_figure,
             "error_reduction": error_reduction_figure}  # fmt: skip
    for stem in ("layer_weights", "sample_efficiency"):
        if may_remove(f"{stem}.png", made):
            (out / f"{stem}.png").unlink(missing_ok=True)  # the name figures had before they named their runs
    written = []
    for stem, draw in drawn.items():
        try:
            drawn_now = draw(df, out / figures[stem])
        except (ValueError, TypeError, KeyError, IndexError) as e:  # a figure never stops the report's tables
            plt.close("all")
            (out / figures[stem]).unlink(missing_ok=True)
            print(
                f"{stem}: not drawn ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); the tables stand"
            )
            continue
        if drawn_now:
            written.append(figures[stem])
        elif may_remove(figures[stem], made):
            (out / figures[stem]).unlink(missing_ok=True)
            print(f"{stem}: no runs for this figure; none written")
    return written
