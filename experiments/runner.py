"""Recipes behind ``run.py`` (Peters et al. 2018 §3.3-3.4): train a task model with ELMo and write
its record (``train``), fine-tune the biLM on a task's text only (``finetune``, Table 7), and the
layer probes (§5.3). Scoring a trained model on a file is ``trained_runs.evaluate``.

What varies lives in ``conf/``; what a run is (its kind, ELMo position, encoder, identity and
directory) is decided once by ``plan.RunPlan``; its pieces (task, splits, layers, mixes) come from
``pipeline``; its record is a ``record.Record``; the training loop is ``trainer``.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import ConfigError, SuiteError
from tasks.registry import probe_function

from .pipeline import (  # noqa: F401 - also the names other modules use through the runner
    build_features,
    build_run,
    make_task,
    task_text,
    training_splits,
    with_layers,
)
from .plan import RunPlan
from .predictions_file import write_predictions_file
from .record import Record
from .run_config import RunConfig
from .run_directories import mark_finished, prepare_run_dir, run_metadata
from .trainer import fit, passes_per_epoch
from .training_log import open_training_log

RUN_PY = Path(__file__).resolve().parents[1] / "run.py"


def run_probe(plan: RunPlan, out_dir: Path, encoder) -> dict:
    """§5.3 layer probes: per-layer accuracy from the encoder's cached activations."""
    run, started = plan.run, time.time()
    results = probe_function(run.task.name)(run, encoder.cache(), run_metadata(plan, out_dir, encoder))
    results.update(task=run.task.name, train_seconds=round(time.time() - started, 1), elmo_position=plan.run.position)
    Record.from_dict(results).write(out_dir / plan.record_name)
    mark_finished(out_dir)
    print(json.dumps({"task": run.task.name, **results["dev"]}, indent=2))
    return results


def train(run: RunConfig, out_dir: Path) -> dict:
    plan = RunPlan.resolve(run)
    encoder = plan.encoder
    out_dir, previous = prepare_run_dir(plan, out_dir)
    if previous is not None:
        announce(previous, out_dir / plan.record_name, Path(plan.run.runs_root), reused=True)
        return previous
    results_path = out_dir / plan.record_name
    if plan.kind == "probe":
        return run_probe(plan, out_dir, encoder)
    built = build_run(plan)
    task, splits, encoder, features, model = built.task, built.splits, built.encoder, built.features, built.model
    fraction = getattr(plan.run.data, "fraction", 1.0)
    used = f"; training on {len(splits['train']):,} of them (data.fraction={fraction})" if fraction != 1.0 else ""
    print("data: " + json.dumps(task.data_stats) + used, flush=True)
    for warning in task.data_warnings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    state_path = out_dir / "train_state.pt"  # resumed when a stopped run of this identity left one
    where = {"seed": plan.run.seed, "device": built.device, "passes": passes_per_epoch(plan.run)}
    log = open_training_log(plan.run.logger, out_dir)  # curves as it trains; no part of the run's identity
    try:
        result = fit(task, model, built.data, built.trainer, **where, state_path=state_path, run=plan.digest, log=log)
    finally:
        if log is not None:
            log.close()
    prediction_files = {
        split: str(task.write_predictions(splits[split], preds, out_dir / f"{split}_predictions"))
        for split, preds in result["predictions"].items()
    }
    kept_predictions = {
        split: write_predictions_file(out_dir / f"{split}_predictions.json.gz", task.name, split, preds)
        for split, preds in result["predictions"].items()
    }
    record = Record(
        **run_metadata(plan, out_dir, encoder),
        task=task.name,
        metric=task.metric,
        dev=result["dev"],
        test=result.get("test"),
        elmo_position=plan.run.position,
        train_examples=len(splits["train"]),
        mixing_weights=features.layer_weights(),
        best_epoch=result["best_epoch"],
        epochs=result["epochs"],
        train_seconds=result["train_seconds"],
        data_stats=task.data_stats,
        data_warnings=task.data_warnings(),
        prediction_files=prediction_files,
        predictions=kept_predictions,
        bilm_finetune=encoder.finetune_report,
        resumed_from_epoch=result.get("resumed_from_epoch"),
    )
    torch_save_atomic(
        {
            "config": plan.resolved,
            "task_state": task.state(),
            "model": model.state_dict(),
            "encoder_sha256": encoder.sha256,  # the biLM's weights or a Transformer's files ("bilm_sha256" before)
            "encoder_options_sha256": getattr(encoder, "options_sha256", None),  # the biLM's options.json
        },
        out_dir / "best.pt",
    )  # complete or absent, like the record written after it
    record.write(results_path)
    state_path.unlink(missing_ok=True)  # the record and best.pt hold everything now
    mark_finished(out_dir)
    results = record.to_dict()
    announce(results, results_path, Path(plan.run.runs_root))
    return results


def announce(record: dict, results_path: Path, runs_root: Path, reused: bool = False) -> None:
    """The run's dev metric and the command that scores a file with its model (also when a
    finished configuration is skipped: the model is in the directory that trained it, and the metric
    shown is the one its kept predictions give, not the number its record holds)."""
    metric = record.get("metric")
    if not metric or metric not in (record.get("dev") or {}):
        return
    shown = f"{record['dev'][metric]:.2f}"
    if reused:
        shown = rescored_metric(record, Path(record.get("run_dir") or results_path.parent) / results_path.name)
    print(f"dev {metric}: {shown}  ->  {results_path}", flush=True)
    trained_in = Path(record.get("reused_from") or record.get("run_dir") or results_path.parent)
    for line in next_steps(record, trained_in, runs_root):
        print(line, flush=True)


def rescored_metric(record: dict, path: Path) -> str:
    """A reused record's dev metric as its kept predictions score it (``experiments.rescoring``), saying
    so, and saying what the record holds when that differs; or the recorded one, saying why it is not
    re-scored."""
    from .rescoring import TOLERANCE, NotRescored, RescoringFailed, rescore

    recorded = record["dev"][record["metric"]]
    try:
        found = rescore(Record.read(path)).value
    except (NotRescored, RescoringFailed, SuiteError) as e:
        return f"{recorded:.2f} (as recorded; not re-scored: {e})"
    if isinstance(recorded, (int, float)) and abs(found - recorded) <= TOLERANCE:
        return f"{found:.2f} (re-scored from its kept predictions)"
    return f"{found:.2f} (re-scored from its kept predictions; its record says {recorded}, so no table takes it)"


def next_steps(record: dict, trained_in: Path, runs_root: Path) -> list[str]:
    """What to run next, each line as it runs when pasted: score a file with the trained model (its own
    dev file when it read a local one, which exists), the same configuration without ELMo when it had
    ELMo, and the report that makes a table of the runs under this launch's ``runs_root``."""
    from tasks.common.data_files import data_files

    python, run_py, config = python_command(), reachable(RUN_PY), record.get("config") or {}
    lines = []
    if (trained_in / "best.pt").is_file():
        dev = data_files(config.get("data") or {}).get("dev")
        test = override_word("data.test_path", str(dev)) if dev is not None and dev.is_file() else "data.test_path=FILE"
        checkpoint = override_word("checkpoint", str(trained_in))
        lines.append(f"score a file with it: {python} {run_py} mode=evaluate {checkpoint} {test}")
    try:
        r = Record.from_dict(record)
    except SuiteError:
        return lines
    root = shlex.quote(str(runs_root))
    launch = launch_overrides()
    if r.uses_encoder and not r.is_probe:
        kept = without_elmo(launch if launch is not None else list(r.choices))
        given_root = any(o.startswith("runs_root=") for o in kept)
        kept += ["+ablation=baseline", *([] if given_root else [f"runs_root={root}"])]
        lines.append(f"the same without ELMo: {python} {run_py} {' '.join(shlex.quote(o) for o in kept)}")
    options = report_options(r, runs_root, launch or [])
    lines.append(f"a table of the runs: {python} -m reporting.report --runs {root} {options}")
    return lines


def override_word(key: str, value: str) -> str:
    """``key=value`` as one shell word that Hydra reads back as ``value``: quoted for Hydra where the value
    holds a character of its override grammar (a run directory named after ``task.model.hidden=[8]``)."""
    if re.fullmatch(r"[\w./:+@%~-]*", value):
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")  # Hydra's quoted string
    word = f"{key}='{escaped}'"
    return f'"{word}"' if not re.search(r'["$`\\!]', word) else shlex.quote(word)  # the shell's word


def report_options(r: Record, runs_root: Path, launch: list[str]) -> str:
    """The report's options for this run's table, so that the printed line runs as printed whatever else the
    runs root holds: its profile, its biLM (a SHA-256 prefix; a baseline reads none and joins any biLM's
    table), ``--accept`` for each setting the launch changed on purpose (``trainer.max_epochs=1``: without it
    the run would be an extra, not a cell), and a table directory beside the runs root (``outputs/tables``
    for ``outputs/runs``)."""
    options = [f"--profile {shlex.quote(r.profile)}"] if r.profile else []
    if r.uses_encoder and r.bilm_sha256:
        options.append(f"--bilm {r.bilm_sha256[:12]}")
    keys = dict.fromkeys(o.split("=", 1)[0].lstrip("+~") for o in without_elmo(launch) if "=" in o)
    accepted = [k for k in keys if "." in k and not k.startswith(("hydra.", "embed_sample."))]
    options += [f"--accept {' '.join(accepted)}"] if accepted else []
    return " ".join([*options, f"--out {shlex.quote(str(Path(runs_root).parent / 'tables'))}"])


ELMO_GROUPS = ("elmo", "encoder", "cache", "ablation")  # what a run without ELMo leaves out of its command line


def without_elmo(overrides: list[str]) -> list[str]:
    """The overrides of a launch less those that choose or set ELMo (``elmo.*``, ``encoder*``, ``cache.*``,
    an ablation, ``task.elmo_position``): every other one (seed, data, trainer, model) is kept."""
    kept = []
    for o in overrides:
        key = o.split("=", 1)[0].lstrip("+~")
        if key.split(".")[0].split("/")[0] not in ELMO_GROUPS and key != "task.elmo_position":
            kept.append(o)
    return kept


def launch_overrides() -> list[str] | None:
    """This job's overrides as Hydra read them (one job of a sweep: its own values), or None outside
    a Hydra launch (a run started from Python)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    return list(HydraConfig.get().overrides.task)


def python_command() -> str:
    """How to call this Python from a new shell: the project's ``.venv/bin/python`` (``reachable``) when it runs
    in a virtual environment that is not activated there."""
    if sys.prefix == sys.base_prefix:  # no virtual environment: whatever 'python' is
        return "python"
    return reachable(Path(sys.executable))


def reachable(path: Path) -> str:
    """``path`` as a new shell at the working directory reaches it: relative when below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def finetune(run: RunConfig, out_dir: Path) -> dict:
    """``mode=finetune`` (§3.4, Table 7): only fine-tune the biLM on the task's training text and report
    the dev perplexity before and after; the result is the same cached biLM that ``encoder.finetune=true``
    runs use."""
    plan = RunPlan.resolve(run, finetune=True)
    encoder = plan.encoder
    if encoder.kind != "bilm":
        raise ConfigError(f"mode=finetune fine-tunes the biLM (§3.4); it is not available with encoder={encoder.kind}")
    out_dir, previous = prepare_run_dir(plan, out_dir)
    if previous is not None:
        return previous
    task = make_task(plan.run)
    splits = training_splits(plan.run, task)
    meta = run_metadata(plan, out_dir, encoder)  # the base biLM's identity
    tuned = encoder.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    record = Record(**meta, task=task.name, train_examples=len(splits["train"]), bilm_finetune=tuned.finetune_report)
    record.write(out_dir / plan.record_name)
    report = record.to_dict()
    mark_finished(out_dir)
    print(json.dumps(report, indent=2), flush=True)
    return report
