"""Recipes behind ``run.py`` (Peters et al. 2018 §3.3-3.4): train a task model with ELMo and write
its record (``train``), score a trained model on a file (``evaluate``), fine-tune the biLM on a
task's text only (``finetune``, Table 7), and the layer probes (§5.3).

What varies lives in ``conf/``; the run's identity and records in ``run_records``; where the
layers come from in ``bilm_source``; the training loop in ``trainer``.
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from elmo_core.errors import ConfigError, WeightsError

from .base import TaskSplit
from .coref.task import CorefTask
from .bilm_source import BiLMSource
from .layers import ElmoFeatures
from .ner.task import NerTask
from .nli.task import NliTask
from .probes.pos import run_pos_probe
from .probes.wsd import run_wsd_probe
from .qa.task import QaTask
from .run_records import config_hash, finished_run, hydra_choice, run_metadata, write_json_atomic
from .srl.task import SrlTask
from .sst.task import SstTask
from .trainer import fit, predict, set_seed

TASKS = {"ner": NerTask, "sst": SstTask, "srl": SrlTask, "qa": QaTask, "nli": NliTask, "coref": CorefTask}
PROBES = {"probe_pos": run_pos_probe, "probe_wsd": run_wsd_probe}


def make_task(cfg: DictConfig):
    if cfg.task.name not in TASKS:
        raise ConfigError(f"unknown task {cfg.task.name!r} (available: {', '.join([*TASKS, *PROBES])})")
    return TASKS[cfg.task.name](cfg.task)


def elmo_position(cfg: DictConfig) -> str:
    """``elmo.position``, with ``paper`` meaning the task's own setting in the paper."""
    return cfg.task.elmo_position if cfg.elmo.position == "paper" else cfg.elmo.position


def build_features(cfg: DictConfig, source: BiLMSource) -> ElmoFeatures:
    num_layers, dim = source.layer_shape()
    return ElmoFeatures(elmo_position(cfg), num_layers, dim, cfg.elmo.mix, cfg.elmo.dropout, cfg.elmo.layer_norm)


def subsample(ds, fraction: float):
    """The first ⌈fraction·n⌉ examples of a fixed permutation: smaller fractions are subsets of larger."""
    if not 0 < fraction <= 1:
        raise ConfigError(f"data.fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return ds
    order = np.random.default_rng(12345).permutation(len(ds))
    return ds.select(sorted(order[: max(1, math.ceil(fraction * len(ds)))].tolist()))


def training_splits(cfg: DictConfig, task) -> dict:
    """The task's splits (train and dev required), train cut to ``data.fraction``."""
    splits = task.load_splits(cfg.data)
    for required in ("train", "dev"):
        if required not in splits:
            raise ConfigError(f"no {required} split (set data.dir or data.{required}_path)")
    if cfg.data.get("fraction", 1.0) != 1.0:  # prepare again: per-split row bookkeeping must match the subset
        splits["train"] = task.prepare(subsample(splits["train"], cfg.data.fraction), "train")
    return splits


def with_layers(cfg: DictConfig, task, splits: dict, source: BiLMSource) -> dict[str, TaskSplit]:
    """Each split with the layer source of its sentences (none when ELMo is not used)."""
    use = elmo_position(cfg) != "none"
    return {name: TaskSplit(name, ds, source.layer_source(cfg, task.sentences(ds), f"{task.name}/{name}")
                            if use else None)
            for name, ds in splits.items()}


def task_text(task, ds) -> str:
    return "\n".join(" ".join(s) for s in task.sentences(ds)) + "\n"


def run_probe(cfg: DictConfig, out_dir: Path, source: BiLMSource, resolved: dict, digest: str) -> dict:
    """§5.3 layer probes: per-layer accuracy from cached biLM activations."""
    started = time.time()
    results = PROBES[cfg.task.name](cfg, source.cache(cfg),
                                    run_metadata(cfg, out_dir, source.identity(), resolved, digest))
    results.update(task=cfg.task.name, train_seconds=round(time.time() - started, 1), elmo_position="probe")
    write_json_atomic(out_dir / "results.json", results)
    print(json.dumps({"task": cfg.task.name, **results["dev"]}, indent=2))
    return results


def train(cfg: DictConfig, out_dir: Path) -> dict:
    resolved = OmegaConf.to_container(cfg, resolve=True)
    digest = config_hash(resolved)
    results_path = out_dir / "results.json"
    previous = finished_run(out_dir, Path(cfg.runs_root), digest)
    if previous is not None:
        print(f"skipping: this configuration already has its result ({previous.get('run_dir')})", flush=True)
        if not results_path.exists():  # the same run serves this name too (e.g. Table 1 'elmo' = Table 2 'λ=0.001')
            previous = {**previous, "ablation": hydra_choice("ablation"), "run_dir": str(out_dir),
                        "reused_from": previous.get("run_dir")}
            write_json_atomic(results_path, previous)
        return previous
    if results_path.exists():
        print(f"warning: {results_path} was made with another configuration; running again", file=sys.stderr)
    source = BiLMSource.from_config(cfg.elmo)
    if cfg.task.name in PROBES:
        return run_probe(cfg, out_dir, source, resolved, digest)
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    print("data: " + json.dumps(task.data_stats), flush=True)
    task.build_vocab(splits["train"])
    if cfg.elmo.finetune and elmo_position(cfg) != "none":
        source = source.finetuned(cfg, task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    data = with_layers(cfg, task, splits, source)
    set_seed(cfg.seed)
    features = build_features(cfg, source)
    model = task.build_model(features)
    result = fit(task, model, data, cfg, out_dir)
    prediction_files = {split: str(task.write_predictions(splits[split], preds, out_dir / f"{split}_predictions"))
                        for split, preds in result["predictions"].items()}
    results = {
        **run_metadata(cfg, out_dir, source.identity(), resolved, digest),
        "task": task.name, "metric": task.metric, "dev": result["dev"], "test": result.get("test"),
        "elmo_position": elmo_position(cfg), "train_examples": len(splits["train"]),
        "mixing_weights": features.layer_weights(), "best_epoch": result["best_epoch"], "epochs": result["epochs"],
        "train_seconds": result["train_seconds"], "data_stats": task.data_stats,
        "prediction_files": prediction_files, "bilm_finetune": source.finetune_report,
    }
    torch.save({"config": resolved, "task_state": task.state(), "model": model.state_dict(),
                "bilm_sha256": source.sha256}, out_dir / "best.pt")
    write_json_atomic(results_path, results)
    print(f"dev {task.metric}: {result['dev'][task.metric]:.2f}  ->  {results_path}", flush=True)
    return results


def finetune(cfg: DictConfig, out_dir: Path) -> dict:
    """``mode=finetune`` (§3.4, Table 7): only fine-tune the biLM on the task's training text and report
    the dev perplexity before and after; the result is the same cached biLM that ``elmo.finetune=true``
    runs use."""
    source = BiLMSource.from_config(cfg.elmo)
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    meta = run_metadata(cfg, out_dir, source.identity(), resolved, config_hash(resolved))  # the base biLM's identity
    tuned = source.finetuned(cfg, task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    report = {**meta, "task": task.name, "train_examples": len(splits["train"]), "bilm_finetune": tuned.finetune_report}
    write_json_atomic(out_dir / "finetune.json", report)
    print(json.dumps(report, indent=2), flush=True)
    return report


def evaluate(cfg: DictConfig, out_dir: Path) -> dict:
    if not cfg.checkpoint:
        raise ConfigError("mode=evaluate needs checkpoint=PATH/best.pt")
    try:
        ckpt = torch.load(cfg.checkpoint, map_location="cpu", weights_only=True)
    except Exception as e:
        raise WeightsError(f"{cfg.checkpoint}: unreadable checkpoint ({type(e).__name__}: {e})") from None
    saved = OmegaConf.create(ckpt["config"])
    saved.device = cfg.device
    test_path = cfg.data.get("test_path")
    if not test_path:
        raise ConfigError("mode=evaluate needs data.test_path=FILE")
    source = BiLMSource.from_config(saved.elmo)
    if source.sha256 != ckpt["bilm_sha256"]:
        raise WeightsError(f"{source.weights} is not the biLM this model was trained with")
    task = make_task(saved)
    task.load_state(ckpt["task_state"])
    splits = task.load_splits(OmegaConf.create({"test_path": test_path}))
    model = task.build_model(build_features(saved, source))
    model.load_state_dict(ckpt["model"])
    test = with_layers(saved, task, splits, source)["test"]
    predictions = predict(task, model, test, saved.trainer.eval_batch_size)
    metrics = task.score(splits["test"], predictions)
    written = task.write_predictions(splits["test"], predictions, out_dir / f"{Path(test_path).stem}_predictions")
    report = {"checkpoint": str(cfg.checkpoint), "test_path": str(test_path), "metrics": metrics,
              "prediction_file": str(written)}
    write_json_atomic(out_dir / "eval_results.json", report)
    print(json.dumps(report, indent=2))
    return report
