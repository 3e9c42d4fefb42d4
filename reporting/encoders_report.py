"""BERT beside ELMo (Devlin et al. 2019 beside Peters et al. 2018 §5): the same task heads and
layer mixes with no contextual layers (baseline), the biLM's (ELMo) or a Transformer's
(``encoder=transformer``), and the layer probes (§5.3) per layer of each encoder.

Written by ``python -m reporting.report`` as ``encoders.{md,csv,tex}`` when Transformer records
are present; the paper's Tables 1-3 and ``probes.md`` never include them.
"""

from __future__ import annotations

import pandas as pd

from experiments import paper_numbers as paper
from tasks.registry import sweep_tasks

FIRST_ROWS = ("ner", "sst", "srl", "nli", "qa")  # the order the committed encoders tables have kept since 2026-11-21


def encoder_tasks() -> list[str]:
    """The table's rows: the tasks of the encoders sweep (``tasks.registry.sweep_tasks``), those the committed
    tables have in their order first, then every other task (Table 1's order)."""
    swept = sweep_tasks("encoders")
    ordered = [*(t for t in FIRST_ROWS if t in swept), *(t for t in swept if t not in FIRST_ROWS)]
    return [*ordered, *(t for t in paper.TASKS if t not in ordered)]


def _cell(values: pd.Series) -> str:
    if len(values) == 0:
        return "— (n=0)"
    if len(values) == 1:
        return f"{values.iloc[0]:.2f} (n=1)"
    return f"{values.mean():.2f} ± {values.std(ddof=1):.2f} (n={len(values)})"


def encoders_table(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows: tasks; columns: baseline, ELMo (the biLM), each Transformer; all at the paper's ELMo
    position for the task (setting ``elmo``), dev, mean ± std over seeds. Returns the records used."""
    if df.empty or "encoder" not in df or df.encoder.dropna().empty:
        return pd.DataFrame(), pd.DataFrame()
    full = df[df.full]
    baseline = full[full.encoder.isna() & (full.setting == "baseline")]
    elmo = full[full.encoder.isna() & (full.setting == "elmo")]
    transformer = full[full.encoder.notna() & (full.setting.str.split("+").str[0] == "elmo")]
    labels = sorted(set(transformer.encoder))
    rows = []
    for task in encoder_tasks():
        if task not in set(transformer.task):
            continue
        row = {
            "task": f"{task} ({paper.TASKS[task]['metric']})",
            "baseline": _cell(baseline[baseline.task == task].value),
            "ELMo (biLM)": _cell(elmo[elmo.task == task].value),
        }
        for label in labels:
            row[f"BERT: {label}"] = _cell(
                transformer[(transformer.task == task) & (transformer.encoder == label)].value
            )
        rows.append(row)
    used = pd.concat(
        [baseline[baseline.task.isin(set(transformer.task))], elmo[elmo.task.isin(set(transformer.task))], transformer]
    )
    return pd.DataFrame(rows), used


def probes_by_encoder(probes: pd.DataFrame) -> pd.DataFrame:
    """Probe accuracy per layer (mean over runs) for the biLM and each Transformer, side by side."""
    if probes.empty or probes.encoder.dropna().empty:
        return pd.DataFrame()
    probes = probes.assign(encoder=probes.encoder.fillna("biLM"))
    means = probes.groupby(["probe", "layer", "encoder"])["accuracy"].mean().unstack("encoder")
    order = lambda layer: (0, int(layer)) if str(layer).isdigit() else (1, str(layer))  # noqa: E731
    means = means.loc[sorted(means.index, key=lambda pl: (pl[0], order(pl[1])))]
    return means.map(lambda v: "—" if pd.isna(v) else f"{v:.2f}").reset_index()


NOTES = (
    "Dev, quick profile unless the title says otherwise. Every column uses the same task heads and the "
    "same scalar mix (softmax-normalized weights, γ, λ‖w‖²) at the paper's ELMo position for each task; "
    "only the source of the layers differs: none (baseline), the embedded biLM (ELMo: token layer + 2 "
    "biLSTM layers) or a frozen Transformer (embedding output + every hidden layer; a word's vector from "
    "its first WordPiece piece unless the column says otherwise). Probes: accuracy per layer, 0 = the "
    "token/embedding layer."
)
