"""The report's tables, declared (Peters et al. 2018 Tables 1-3 and 5-7, and the suite's encoders and
variants tables): each names its file, its caption and what makes its rows, the records behind them and
its notes from the report's inputs. ``reporting.report`` renders every one alike, in this order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from experiments import paper_numbers as paper

from .cross_validation import cross_validation_table, pooled_gain_note
from .encoders_report import NOTES as ENCODER_NOTES
from .encoders_report import encoders_table, probes_by_encoder
from .four_arms import ARMS, four_arm_table
from .four_arms import NOTE as FOUR_ARM_NOTE
from .run_frame import Selection, records, table7
from .tables import UNCERTAINTY_NOTE, ablation_table, rescoring_note, row_tasks, table1, table1_markdown, variants_table


@dataclass(frozen=True)
class ReportInputs:
    runs: pd.DataFrame  # every task run, the biLM's and each Transformer's
    df: pd.DataFrame  # the biLM's task runs (Tables 1-3)
    roots: list[Path]
    select: Selection
    probes: pd.DataFrame  # the probes' accuracy per layer (the biLM's)
    probe_sources: pd.DataFrame
    test: bool  # the test metric beside dev
    made: dict = field(default_factory=dict, compare=False)  # tables made once and read by another


Made = tuple[pd.DataFrame, pd.DataFrame, str] | None  # rows, the records behind them, notes; None: not this report


@dataclass(frozen=True)
class DeclaredTable:
    stem: str  # <stem>.md, .csv, .tex
    caption: str
    make: Callable[[ReportInputs], Made]
    task_runs: bool = False  # made only when the biLM's task runs are there
    markdown: Callable[[pd.DataFrame], str] | None = None  # the .md's tables (default: the frame as one table)


def encoders(inputs: ReportInputs) -> Made:
    """Baseline / ELMo / each Transformer per task, and the probes per layer of each encoder."""
    table, sources = encoders_table(inputs.runs)
    if table.empty:
        return None
    found = [r for _, r in records(inputs.roots, "results.json", inputs.select, {}) if r.task in paper.PROBES]
    probes = pd.DataFrame(
        [
            {"probe": r.task, "layer": layer, "accuracy": acc, "encoder": r.encoder}
            for r in found
            for layer, acc in r.dev["accuracy_per_layer"].items()
        ]
    )
    by_layer = probes_by_encoder(probes) if not probes.empty else pd.DataFrame()
    heading = "\n\n## Probes per layer (POS accuracy, WSD 1-NN accuracy)\n\n"
    return table, sources, ENCODER_NOTES + (heading + by_layer.to_markdown(index=False) if not by_layer.empty else "")


FINETUNING_NOTE = (
    "One epoch on the task's training text, labels ignored (`python run.py mode=finetune "
    "task=<task> source=local data.fraction=1.0`); perplexity on the task's dev text, average of the "
    "forward and backward perplexities. The paper's base biLM is the 1B Word Benchmark model; ours is "
    "the embedded biLM named below (its model card says what it read). The downstream effect is in "
    "`variants.md`. A fine-tuning draws its dropout masks from `encoder.finetune_seed` (0 unless set), "
    "whatever the run's seed: another seed gives another biLM, and the after-perplexity moves with it by "
    "tens of points (NER on the fourth biLM: 291.3, 214.3, 220.8, 238.7 with seeds 0-3; "
    "`results/CHANGES.md`, 2026-12-03), so a change smaller than that may be the seed's. A row of several "
    "fine-tunings (`encoder.finetune_seed=0,1,2`) gives their mean after-perplexity and its range."
)


def finetuning(inputs: ReportInputs) -> Made:
    tuned, sources = table7(inputs.roots, inputs.select)
    return None if tuned.empty else (tuned, sources, FINETUNING_NOTE)


PROBES_UNCHECKED = (
    "the WSD probe keeps no predictions, and POS probe records made before predictions were kept: their "
    "accuracies as recorded"
)


def probe_layers(inputs: ReportInputs) -> Made:
    if inputs.probes.empty:
        return None
    notes = "\n".join(f"- {p}: {paper.PROBES[p].get('note', '—')}" for p in sorted(set(inputs.probes.probe)))
    unchecked = rescoring_note(inputs.probe_sources, PROBES_UNCHECKED)
    return inputs.probes, inputs.probe_sources, f"The data differ from the paper's:\n{notes}\n\n{unchecked}"


def paper_table(settings: list[str], rows: Callable[[pd.DataFrame, bool], pd.DataFrame], ablation: bool = True):
    """One of Tables 1-3: its rows, the records of its settings (an ablation table's: those of its rows)
    and its uncertainty note with how many of those records were re-scored."""

    def make(inputs: ReportInputs) -> Made:
        df = inputs.df
        used = df[df.setting.isin(settings) & df.full]
        if ablation:
            used = used[used.task.isin(row_tasks(df, settings))]
        return rows(df, inputs.test), used, f"{UNCERTAINTY_NOTE}\n\n{rescoring_note(used)}"

    return make


def variants(inputs: ReportInputs) -> Made:
    """The biLM state policy and fine-tuned biLM variants beside their plain settings, where run."""
    df = inputs.df
    variant_rows = df[df.setting.str.contains("+", regex=False)]
    if variant_rows.empty:
        return None
    pairs = set(zip(variant_rows.task, variant_rows.setting.str.split("+").str[0]))
    base = df[[pair in pairs for pair in zip(df.task, df.setting)]]
    return variants_table(df), pd.concat([variant_rows, base]), ""


def cross_validation(inputs: ReportInputs) -> Made:
    if "cross_validation" not in inputs.made:  # Table 1's notes read it too
        inputs.made["cross_validation"] = cross_validation_table(inputs.roots, inputs.select)
    return inputs.made["cross_validation"]


def table1_with_cross_validation(inputs: ReportInputs) -> Made:
    """Table 1, its notes ending with each cross-validated task's pooled gain (``cross_validation.md``)."""
    made, folds = paper_table(["baseline", "elmo"], table1, ablation=False)(inputs), cross_validation(inputs)
    if made is None or folds is None or not folds[0].attrs.get("pooled"):
        return made
    return made[0], made[1], "\n\n".join([made[2], *map(pooled_gain_note, folds[0].attrs["pooled"])])


def four_arms(inputs: ReportInputs) -> Made:
    """Nothing pretrained / static vectors / ELMo alone / both, where a task has runs in two arms or more."""
    frame = four_arm_table(inputs.df)
    if frame.empty:
        return None
    df = inputs.df
    used = df[df.setting.isin(list(ARMS)) & df.full]
    return frame, used, f"{FOUR_ARM_NOTE}\n\n{UNCERTAINTY_NOTE}\n\n{rescoring_note(used)}"


TABLE2_SETTINGS = ["baseline", "last_only", "all_lambda1", "all_lambda0.001"]
TABLE3_SETTINGS = ["input", "both", "output"]
TABLES = (
    DeclaredTable("encoders", "Encoders: baseline / ELMo (biLM) / BERT (Transformer), same heads (dev)", encoders),
    DeclaredTable("table7", "Table 7 (biLM part): fine-tuning the biLM on each task's training text", finetuning),
    DeclaredTable("probes", "Layer probes (Tables 5-6): accuracy per biLM layer", probe_layers),
    DeclaredTable(
        "table1",
        "Table 1: baseline vs ELMo (dev; paper: test)",
        table1_with_cross_validation,
        True,
        table1_markdown,
    ),
    DeclaredTable(
        "four_arms",
        "What static vectors and ELMo each add: four arms of the same head (dev)",
        four_arms,
        True,
        lambda frame: frame.to_markdown(index=False, disable_numparse=True),
    ),
    DeclaredTable(
        "table2",
        "Table 2: layer weighting (dev)",
        paper_table(TABLE2_SETTINGS, lambda df, test: ablation_table(df, paper.TABLE2, TABLE2_SETTINGS, test)),
        True,
    ),
    DeclaredTable(
        "table3",
        "Table 3: where ELMo goes (dev)",
        paper_table(TABLE3_SETTINGS, lambda df, test: ablation_table(df, paper.TABLE3, TABLE3_SETTINGS, test)),
        True,
    ),
    DeclaredTable(
        "variants", "biLM state policy and fine-tuned biLM (§3.4) against the plain setting (dev)", variants, True
    ),
    DeclaredTable(
        "cross_validation",
        "Cross-validation: baseline vs ELMo, each fold held out (train and dev pooled)",
        cross_validation,
        markdown=lambda frame: frame.to_markdown(index=False, disable_numparse=True),
    ),
)
