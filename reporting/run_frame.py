"""The run records as the report reads them (Peters et al. 2018, Tables 1-3 and 7, the probes of
Tables 5-6): which records one set of tables admits (``Selection``: one profile, one biLM, the
accepted differences), the records themselves (``records``; those that may not join a cell go to
the extras), and the frames built from them: one row per task run (``load_runs``), the probes per
layer (``probes_table``) and the biLM fine-tunings (``table7``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from encoders.bilm import FINETUNE_SEED
from experiments import paper_numbers as paper
from experiments.plan import record_digest
from experiments.record import Record, RecordSchemaError
from experiments.runs_index import record_paths

from .cell_rules import cell_settings, differences, variant
from .figures import bilm_name, shipped_bilms
from .per_record import read


@dataclass(frozen=True)
class Selection:
    """Which records one set of tables reports: one run profile and one biLM (by SHA-256). Runs
    without ELMo (baselines) do not depend on the biLM and go with any."""

    profile: str | None = None
    bilm: str | None = None
    accepted: tuple[str, ...] = ()  # keys that may differ from the profile's prescription (--accept)

    def admits(self, r: Record) -> bool:
        return not self.refusal(r)

    def refusal(self, r: Record) -> dict[str, tuple]:
        """Why ``r`` is not one of these tables' records (its profile or biLM), as ``extras.md`` says it."""
        out = {}
        if self.profile is not None and r.profile != self.profile:
            out["profile (these tables report another's; --profile chooses)"] = (r.profile, self.profile)
        if self.bilm is not None and r.bilm_sha256 not in (None, self.bilm):
            out["biLM (these tables report another's; --bilm with another --out reports it)"] = (
                r.bilm_sha256[:12],
                self.bilm[:12],
            )
        return out


FOLD_KEYS = ("data.folds", "data.fold", "trainer.keep")  # what sets a cross-validation fold's run apart


def fold_run(r: Record) -> bool:
    """Whether a record is one fold of a cross-validation (``data.folds`` set): its own table reports it
    (``cross_validation``), never a cell of Tables 1-3."""
    return getattr(r.run.data, "folds", None) is not None


KEEP_LAST = "trainer.keep (a cross-validation fold keeps its last epoch: no choice is made on the fold it holds out)"
FOLD_TAKEN = "data.fold (one run per fold, arm and seed: a later record of it counts)"


def fold_differences(r: Record, accepted: tuple[str, ...] = ()) -> dict[str, tuple]:
    """What keeps a fold's record out of the cross-validation table: any key but the fold's own, or a fold
    run that kept its best dev epoch (``trainer.keep=best_dev``: the held-out fold chose it)."""
    diff = differences(r, (*accepted, *FOLD_KEYS))
    keep = r.run.trainer.keep
    return {**diff, KEEP_LAST: (keep, "last")} if keep != "last" else diff


def latest_per_fold(found: list[tuple[Path, Record]]) -> tuple[list[tuple[Path, Record]], list[tuple[Path, Record]]]:
    """One record per (task, folds, fold, arm, seed), the latest by date (as one run per seed and cell
    elsewhere); and the records it supersedes."""
    chosen: dict[tuple, tuple[Path, Record]] = {}
    for pr in sorted(found, key=lambda pr: (str(pr[1].date), str(pr[0]))):
        data = pr[1].run.data
        chosen[(pr[1].task, getattr(data, "folds", None), getattr(data, "fold", None), pr[1].ablation, pr[1].seed)] = pr
    kept = {str(p) for p, _ in chosen.values()}
    return list(chosen.values()), [pr for pr in found if str(pr[0]) not in kept]


def records(roots: list[Path], name: str, select: Selection | None = None, extras: dict | None = None):
    """``(path, Record)`` for every ``name`` file below ``roots`` that ``select`` admits. With
    ``extras`` given, only records that may join a table cell (``cell_rules``); the others go into
    ``extras`` (path -> (record, differing keys))."""
    for root in roots:
        for path in record_paths(root, name):
            try:
                r = read(path)
            except RecordSchemaError as e:  # listed apart with why (``malformed``), never read into a table
                if extras is not None:
                    extras.update(malformed(path, e))
                continue
            refused = select.refusal(r) if select is not None else {}
            if refused and extras is not None and name == "results.json":
                extras[str(path)] = (r, refused)  # listed, never left out without a word
            if not refused:
                if extras is not None and name == "results.json":
                    diff = differences(r, select.accepted if select is not None else ())
                    if diff:
                        extras[str(path)] = (r, diff)
                        continue
                yield path, r


def malformed(path: Path, e: RecordSchemaError) -> dict:
    """``extras``' entry of a record that is not what the suite writes."""
    why = str(e).split(": ", 1)[1].removesuffix("; not a record this suite writes")
    return {str(path): (Record(task="?", path=path), {"the record": (why, "what the suite writes")})}


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
        raise SystemExit(
            f"error: the runs come from several profiles: {listed}. Their numbers are not "
            f"comparable; pass --profile NAME to report one of them."
        )
    shipped = shipped_bilms()
    bilms = _counted(r.bilm_sha256 for r in found if (profile is None or r.profile == profile) and r.bilm_sha256)
    listed = ", ".join(f"{bilm_name(k, shipped)} ({v} records)" for k, v in sorted(bilms.items())) or "none"
    if bilm is not None:
        wanted = [sha for sha, name in shipped.items() if name == bilm] or [k for k in bilms if k.startswith(bilm)]
        if len(wanted) != 1:
            raise SystemExit(f"error: --bilm {bilm} matches {len(wanted)} biLMs; found: {listed}")
        return Selection(profile, wanted[0])
    if len(bilms) > 1:
        raise SystemExit(
            f"error: the runs use several biLMs: {listed}. Their numbers are not comparable; "
            f"pass --bilm NAME|SHA to report one of them."
        )
    return Selection(profile, next(iter(bilms), None))


def probes_table(
    roots: list[Path], select: Selection | None = None, extras: dict | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-layer probe accuracy (mean over runs) with the paper's Tables 5-6 beside it, and the records."""
    rows = []
    for path, r in records(roots, "results.json", select):
        if r.task not in paper.PROBES:
            continue  # task runs: load_runs
        diff = differences(r, select.accepted if select is not None else ()) if extras is not None else {}
        if diff:
            extras[str(path)] = (r, diff)
            continue
        for layer, acc in r.dev["accuracy_per_layer"].items():
            rows.append(
                {
                    "probe": r.task,
                    "layer": layer,
                    "accuracy": acc,
                    "key": r.config_hash,
                    "encoder": r.encoder,
                    "path": str(path),
                    **provenance_fields(r),
                }
            )
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    df = pd.DataFrame(rows).drop_duplicates(["probe", "layer", "key"])
    df = df[df.encoder.isna()]  # a Transformer's layers are reported beside the biLM's in encoders.md
    if df.empty:
        return pd.DataFrame(), pd.DataFrame()
    out = df.groupby(["probe", "layer"])["accuracy"].agg(["mean", "count"]).reset_index()
    out["ours"] = [f"{m:.2f} (n={n})" for m, n in zip(out["mean"], out["count"])]
    out["paper"] = [paper.PROBES.get(p, {}).get(layer, "—") for p, layer in zip(out.probe, out.layer)]
    return out[["probe", "layer", "ours", "paper"]], df.drop_duplicates("key")


def table7(roots: list[Path], select: Selection | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 7's biLM half: dev perplexity before -> after fine-tuning on the task text (``mode=finetune``)."""
    rows = []
    by_dir = {}
    for _, r in records(roots, "finetune.json", select):
        ft = by_dir[r.bilm_finetune["dir"]] = r.bilm_finetune
        rows.append(
            {
                "task": r.task,
                "biLM tokens of fine-tuning": ft["tokens"],
                "paper (Table 7)": paper.TABLE7.get(r.task, "—"),
                "key": ft["dir"],
                **provenance_fields(r),
            }
        )
    if not rows:
        return pd.DataFrame(), pd.DataFrame()
    df = pd.DataFrame(rows).drop_duplicates("key")
    column = "dev perplexity before → after (ours)"
    same = ["task", "biLM tokens of fine-tuning", "paper (Table 7)"]  # fine-tunings of other seeds: one row
    tuned = df.groupby(same, sort=False)["key"].agg(list).reset_index()
    tuned[column] = tuned["key"].map(lambda keys: finetunings_perplexities(by_dir[k] for k in keys))
    order = {t: k for k, t in enumerate(paper.TASKS)}
    tuned = tuned.sort_values("task", key=lambda c: c.map(order))
    return tuned[["task", "biLM tokens of fine-tuning", column, "paper (Table 7)"]], df


def finetune_perplexities(info: dict | None) -> str | None:
    return f"{info['dev_perplexity_before']:.1f} → {info['dev_perplexity_after']:.1f}" if info else None


def finetunings_perplexities(infos) -> str:
    """One fine-tuning's ``before → after``; several (other ``encoder.finetune_seed``): the mean after, its
    range and how many fine-tunings."""
    infos = list(infos)
    if len(infos) == 1:
        return finetune_perplexities(infos[0])
    after = [i["dev_perplexity_after"] for i in infos]
    before = infos[0]["dev_perplexity_before"]
    return f"{before:.1f} → {np.mean(after):.1f} ({min(after):.1f}-{max(after):.1f}, {len(after)} fine-tunings)"


def load_runs(roots: list[Path], select: Selection | None = None, extras: dict | None = None) -> pd.DataFrame:
    rows, seen, kept = [], set(), {}
    if extras is not None:  # malformed records, and another profile's or biLM's: listed, with why
        for root in roots:
            for path in record_paths(root, "results.json"):
                try:
                    r = read(path)
                except RecordSchemaError as e:
                    extras.update(malformed(path, e))
                    continue
                if select is not None and select.refusal(r) and r.task not in paper.PROBES:
                    extras[str(path)] = (r, select.refusal(r))
    found = sorted(records(roots, "results.json", select), key=lambda pr: (unseeded_finetuning(pr[1]), str(pr[1].date)))
    accepted = select.accepted if select is not None else ()
    folds = [(p, r) for p, r in found if r.task not in paper.PROBES and fold_run(r)]
    for path, r in folds:  # reported by the cross-validation table, unless it differs in more than its fold
        diff = fold_differences(r, accepted)
        if diff and extras is not None:
            extras[str(path)] = (r, diff)
    for path, r in latest_per_fold([(p, r) for p, r in folds if not fold_differences(r, accepted)])[1]:
        if extras is not None:
            extras[str(path)] = (r, {FOLD_TAKEN: (r.run.data.fold, "a fold no later record holds")})
    for path, r in found:  # the earliest record of a configuration counts (a seeded fine-tuning before an unseeded one)
        if r.task in paper.PROBES or fold_run(r):
            continue  # reported by probes_table and the cross-validation table
        cells = cell_settings(r, accepted) if extras is not None else (r.base_setting,)
        if not cells:
            extras[str(path)] = (r, differences(r, accepted))
            continue
        kind = variant(r, accepted)  # relative to the biLM use the record's profile prescribes
        if kind and r.ablation:
            cells = cells[:1]  # a variant stands beside the plain setting it was launched as, once
        for cell in cells:  # one run may serve several settings (Table 1's 'elmo' is Table 3's 'input' for NER)
            setting = cell + (f"+{kind}" if kind else "")
            keys = {(digest, setting) for digest in configuration_digests(r, path)}
            if keys & seen:
                if extras is not None and unseeded_finetuning(r):
                    extras[str(path)] = (r, SUPERSEDED_FINETUNING)
                continue
            seen |= keys
            rows.append(run_row(path, r, setting))
            kept[str(path)] = r
    df = one_run_per_seed(pd.DataFrame(rows), kept, extras)
    if not df.empty:  # tables use each task's largest training set (a quick profile may train on a subset)
        df["full"] = df.fraction == df.groupby("task").fraction.transform("max")
    return df


CELL_SEED = ["task", "setting", "fraction", "equal_updates", "encoder", "seed"]  # what tells cells apart, and the seed
SEED_TAKEN = "seed (one run per seed and cell: a later record of this cell and seed counts)"


def one_run_per_seed(df: pd.DataFrame, kept: dict, extras: dict | None) -> pd.DataFrame:
    """One configuration and seed is one run: where records of other identities (another code version,
    other data files) fall into the same cell with the same seed, the latest counts and the others are
    listed among the extras."""
    if df.empty:
        return df
    key = [f"_{c}" for c in CELL_SEED]
    order = df.assign(**{f"_{c}": df[c].astype(str) for c in CELL_SEED}).sort_values("date", kind="stable")
    superseded = order[order.duplicated(key, keep="last")]
    out = df.drop(index=superseded.index).reset_index(drop=True)
    for path in sorted(set(superseded.path) - set(out.path)):  # counted in no cell any more
        if extras is not None:
            r = kept[path]
            extras[path] = (
                r,
                {SEED_TAKEN: (r.seed, "a seed no other record of its cell has")},
            )
    return out


SUPERSEDED_FINETUNING = {
    "biLM fine-tuning (a rerun with the seeded one is in the cell)": ("unseeded", f"seed {FINETUNE_SEED}")
}


def unseeded_finetuning(r: Record) -> bool:
    """A run on a biLM fine-tuned before fine-tuning was seeded (2026-11-25): one draw that a rerun of
    the same configuration cannot repeat. It keeps its cell until a rerun on the seeded fine-tuning
    replaces it, and is then listed among the extras."""
    return bool(r.bilm_finetune) and "seed" not in r.bilm_finetune


def configuration_digests(r: Record, path: Path) -> set[str]:
    """The identities under which a record counts as its configuration's run: its own, and for a run
    on the seeded fine-tuning also the one its configuration had before the seed entered identities
    (an unseeded draw of that configuration is the run it replaces)."""
    digests = {r.config_hash or str(path)}
    identity = r.identity or {}
    if "finetune_seed" in identity:
        unseeded = {k: v for k, v in identity.items() if k != "finetune_seed"}
        digests.add(record_digest({**r.to_dict(), "identity": unseeded}))
    return digests


def row_name(r: Record) -> str:
    """A run's row: its task, or for a data set chosen by name (``data=wnut17``) ``task (name)``, or the
    data set's own ``label`` where its YAML gives one (``label: CoNLL-2000 chunking``)."""
    if not r.data_set:
        return r.task
    label = getattr(r.run.data, "label", None)
    return str(label) if label else f"{r.task} ({r.data_set})"


def run_row(path: Path, r: Record, setting: str) -> dict:
    """One table row: a run's metric, seed, mixing weights and provenance, in the cell ``setting``."""
    mix = r.mixing_weights or {}
    return {
        "task": row_name(r),  # another data set: a row of its own
        "task_name": r.task,
        "data_note": getattr(r.run.data, "note", None),
        "metric": r.metric,
        "value": r.value,
        "test_value": np.nan if r.test_value is None else r.test_value,
        "seed": r.seed,
        "setting": setting,
        "launched_as": r.ablation,  # the ablation its command named (None: none named, matched by configuration)
        "fraction": r.fraction,
        "train_examples": r.train_examples,
        "path": str(path),
        "equal_updates": r.equal_updates,
        "s_input": mix.get("input", {}).get("s"),
        "s_output": mix.get("output", {}).get("s"),
        "finetune_ppl": finetune_perplexities(r.bilm_finetune),
        "encoder": r.encoder,
        "vectors": read_vectors(r),
        **provenance_fields(r),
    }


def read_vectors(r: Record) -> bool | None:
    """Whether the run's word embedding started from a vectors file (its identity hashes one); None for a
    record without an identity."""
    if r.identity is None:
        return None
    return "task.model.vectors" in r.file_hashes


def provenance_fields(r: Record) -> dict:
    hw = r.hardware or {}
    machine = f"{hw.get('machine', '?')}" + (f" {hw['cpu']}" if hw.get("cpu") else "")  # the processor: later records
    return {
        "command": r.command,
        "date": r.date,
        "profile": r.profile,
        "bilm_sha256": r.bilm_sha256,
        "bilm_dir": bilm_dir(r),
        "vectors_name": vectors_name(r),
        "hardware": f"{machine}, {hw.get('cpus', '?')} CPUs, {hw.get('torch_threads', '?')} torch "
        f"thread(s), {hw.get('device', '?')}" + (f" ({hw['gpu']})" if hw.get("gpu") else ""),
    }


def bilm_dir(r: Record) -> str | None:
    """The folder a run's biLM was read from (its ``options.json``'s), None for the embedded one or none."""
    options = getattr(r.run.encoder, "options", None)
    return Path(str(options)).parent.name or None if options and r.bilm_sha256 else None


def vectors_name(r: Record) -> str | None:
    """The word vectors a run started from, by name: ``lm-text 50-d`` (the shipped ones), a file's name, or None."""
    model = getattr(r.run.task, "model", None)
    if not r.file_hashes.get("task.model.vectors"):
        return None
    return f"lm-text {model.word_dim}-d" if model.vectors == "shipped" else Path(str(model.vectors)).name
