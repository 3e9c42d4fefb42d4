"""The four-arm table: what static vectors and ELMo each add, made from the records (Peters et al. 2018 §4:
every baseline starts from pretrained word vectors, GloVe or Senna, and ELMo is added to that input).

Per task, four cells of the same head and budget: nothing pretrained (``+ablation=no_pretraining``), static
vectors (``baseline``), ELMo alone (``elmo_alone``) and static vectors + ELMo (``elmo``, the paper's arm).
Two gains, each with its interval over seeds and its paired bootstrap: vectors + ELMo − vectors, the
paper's comparison, beside the paper's gain and relative error reduction; and ELMo − nothing pretrained,
what a table without pretrained vectors measures."""

from __future__ import annotations

import pandas as pd

from experiments import paper_numbers as paper

from .tables import cell, cell_values, gain_columns, gains, mean_of, summarize, table1_rows

ARMS = {  # setting -> column
    "no_pretraining": "nothing pretrained",
    "baseline": "static vectors",
    "elmo_alone": "ELMo alone",
    "elmo": "static vectors + ELMo",
}
GAINS = (  # (reference, other, label)
    ("baseline", "elmo", "vectors + ELMo − vectors"),
    ("no_pretraining", "elmo_alone", "ELMo − nothing pretrained"),
)

NOTE = (
    "The paper's comparison is vectors + ELMo − vectors: its baselines start from GloVe or Senna vectors. "
    "Here the static vectors are word2vec vectors trained on the embedded biLM's own text "
    "(`static_vectors/pretrained/lm-text/CARD.md`), so that gain is what context adds over static vectors "
    "learned from the same text. ELMo − nothing pretrained is the gain a table without pretrained vectors "
    "shows: pretraining and context together. Every cell starts the words without a vector from "
    "xavier_uniform; the four cells of a row differ in `task.model.vectors` and `elmo.position` only."
)


def four_arm_table(df: pd.DataFrame) -> pd.DataFrame:
    """A row per task with runs in at least two arms, one of them without vectors: the four cells, then each
    gain (absolute / relative error reduction, its interval over seeds, its paired bootstrap); the paper's
    gain beside the first."""
    if "vectors" in df and df.vectors.eq(False).all():  # no run read vectors (records made before them)
        return pd.DataFrame()
    if "vectors" in df:  # an arm holds only runs of its input (a table made with --accept task.model.vectors)
        with_vectors = df.setting.isin(["baseline", "elmo"])
        df = df[~((with_vectors & (df.vectors == False)) | (~with_vectors & (df.vectors == True)))]  # noqa: E712
    stats = summarize(df, list(ARMS))
    rows = []
    for task, info in table1_rows(df):
        present = [s for s in ARMS if len(cell_values(df, task, s))]
        if len(present) < 2 or not {"no_pretraining", "elmo_alone"} & set(present):
            continue  # Table 1's two arms alone are Table 1
        row = {"task": f"{task} ({info['metric']})"}
        row.update({column: cell(df, task, setting) for setting, column in ARMS.items()})
        for reference, other, label in GAINS:
            absolute, relative = gains(mean_of(stats, task, reference), mean_of(stats, task, other))
            row[f"{label}: absolute / relative error reduction"] = f"{absolute} / {relative}"
            row.update(gain_columns(cell_values(df, task, reference), cell_values(df, task, other), task, f"{label}: "))
            if reference == "baseline":
                pb, pe = paper.TABLE1.get(task, (None, None))
                p_abs, p_rel = gains(pb, pe)
                row["paper: ELMo − baseline, absolute / relative error reduction (test)"] = f"{p_abs} / {p_rel}"
        rows.append(row)
    return pd.DataFrame(rows)
