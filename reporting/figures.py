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

from . import paper_numbers as paper  # noqa: E402


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
    (n per point in the legend), error bars one sample standard deviation. Returns False (and writes
    nothing) when no task has runs at several fractions."""
    sub = df[df.setting.isin(["baseline", "elmo"])]
    if "equal_updates" in sub:  # a task with equal-updates runs at small fractions shows only those there
        small = sub[sub.fraction < 1]
        ruled = set(small[small.equal_updates].task)
        sub = sub[~((sub.fraction < 1) & sub.task.isin(ruled) & ~sub.equal_updates)]
    tasks = [t for t in paper.TASKS if sub[(sub.task == t)].fraction.nunique() > 1]
    if not tasks:
        return False
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4 * max(1, len(tasks)), 3.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for setting, style in (("baseline", "o--"), ("elmo", "s-")):
            g = sub[(sub.task == task) & (sub.setting == setting)].groupby("fraction")["value"]
            if len(g):
                m, s, n = g.mean(), g.std(ddof=1).fillna(0), g.count()
                seeds = f"n={n.min()}" if n.min() == n.max() else f"n={n.min()}-{n.max()}"
                ax.errorbar(
                    m.index * 100,
                    m.values,
                    yerr=s.values,
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
        "mean over seeds, error bars ± 1 sample std",
        fontsize=9,
        y=1.02,
    )
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return True
