"""Recipes behind ``run.py`` (Peters et al. 2018 §3.3-3.4): train a task model with ELMo and write
its record (``train``), fine-tune the biLM on a task's text only (``finetune``, Table 7), and the
layer probes (§5.3). Scoring a trained model on a file is ``trained_runs.evaluate``.

What varies lives in ``conf/``; what a run is (its kind, ELMo position, encoder, identity and
directory) is decided once by ``plan.RunPlan``; its pieces (task, splits, layers, mixes) come from
``pipeline``; its record is a ``record.Record``; the training loop is ``trainer``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import ConfigError, SuiteError
from tasks.registry import probe_function

from .next_steps import announce
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
from .run_directories import mark_finished, prepare_run_dir, remove_if_unused, run_metadata
from .trainer import fit, passes_per_epoch
from .training_log import open_training_log


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
    launch_dir = out_dir
    out_dir, previous = prepare_run_dir(plan, out_dir)
    if previous is not None:
        if launch_dir.resolve() != out_dir.resolve():  # the folder Hydra made for this launch stays empty
            remove_if_unused(launch_dir, Path(plan.run.runs_root))
        try:  # the record as it is now, where it is now (read once: announced and re-scored from this object)
            reused = Record.from_dict(previous, out_dir / plan.record_name)
        except SuiteError as e:
            print(f"note: the finished record cannot be shown ({e})", file=sys.stderr, flush=True)
        else:
            announce(reused, out_dir / plan.record_name, Path(plan.run.runs_root), reused=True)
        return previous
    results_path = out_dir / plan.record_name
    if plan.kind == "probe":
        return run_probe(plan, out_dir, encoder)
    built = build_run(plan)
    task, splits, encoder, features, model = built.task, built.splits, built.encoder, built.features, built.model
    fraction = getattr(plan.run.data, "fraction", 1.0)
    used = f"; training on {len(splits['train']):,} of them (data.fraction={fraction})" if fraction != 1.0 else ""
    print(f"data: {data_origin(plan)} " + json.dumps(task.data_stats) + used, flush=True)
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
    ).made_from(plan.run)
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
    announce(record, results_path, Path(plan.run.runs_root))
    return record.to_dict()


def data_origin(plan: RunPlan) -> str:
    """Where a run's data are read: the folder(s) of its files, or the hub's data set."""
    folders = sorted({str(p.parent) for p in plan.data_files.values()})
    if folders:
        return f"the files in {', '.join(folders)}"
    return f"the Hugging Face hub's {getattr(plan.run.data, 'hf_name', None) or 'data set'}"


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
