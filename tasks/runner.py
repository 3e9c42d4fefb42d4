"""Recipes behind ``run.py``: train a task model with ELMo (Peters et al. 2018 §3.3) and write
``results.json``; evaluate a trained model on any file in the task's format."""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from elmo_core import file_sha256, load_bilm, read_options

from .activation_cache import ActivationCache
from .layers import ElmoFeatures
from .ner.task import NerTask
from .nli.task import NliTask
from .probes.pos import run_pos_probe
from .probes.wsd import run_wsd_probe
from .qa.task import QaTask
from .srl.task import SrlTask
from .sst.task import SstTask
from .trainer import LiveLayers, fit, set_seed

TASKS = {"ner": NerTask, "sst": SstTask, "srl": SrlTask, "qa": QaTask, "nli": NliTask}
PROBES = {"probe_pos": run_pos_probe, "probe_wsd": run_wsd_probe}
VOLATILE = ("device", "mode", "checkpoint", "runs_root", "demo")  # do not change a run's result


def resolve_bilm(cfg: DictConfig) -> tuple[Path, Path]:
    from elmo_core.pretrained import model_dir
    if cfg.elmo.options or cfg.elmo.weights:
        if not (cfg.elmo.options and cfg.elmo.weights):
            raise SystemExit("error: give both elmo.options and elmo.weights (or neither, for the embedded biLM)")
        return Path(cfg.elmo.options), Path(cfg.elmo.weights)
    try:
        d = model_dir("small")
    except FileNotFoundError as e:
        raise SystemExit(f"error: {e}; pass elmo.options=... elmo.weights=...") from None
    return d / "options.json", d / "weights.hdf5"


def make_task(cfg: DictConfig):
    if cfg.task.name not in TASKS:
        raise SystemExit(f"error: unknown task {cfg.task.name!r} (available: {', '.join(TASKS)})")
    return TASKS[cfg.task.name](cfg.task)


def finetuned_bilm(cfg: DictConfig, task, splits: dict, options: Path, weights: Path) -> tuple[Path, Path, dict]:
    """§3.4 / Table 7: continue training the biLM on the task's training text (labels ignored) for
    ``elmo.finetune_epochs``, then freeze it. Kept under ``<cache_dir>/../finetuned/<hash>`` keyed by
    the base weights and the text, so every run (and seed) on the same data shares one fine-tuned biLM,
    as the paper fine-tuned once per task."""
    from elmo_core.pretrain import parse_args, train as pretrain
    if not (options.parent / "vocab.txt").exists():
        raise SystemExit(f"error: elmo.finetune needs the biLM's vocab.txt and softmax beside {options} "
                         "(models exported by elmo_core.pretrain have them)")
    train_text = "\n".join(" ".join(s) for s in task.sentences(splits["train"])) + "\n"
    dev_text = "\n".join(" ".join(s) for s in task.sentences(splits["dev"])) + "\n"
    key = hashlib.sha256(json.dumps([file_sha256(weights), train_text, dev_text,
                                     cfg.elmo.finetune_epochs]).encode()).hexdigest()[:16]
    out = Path(cfg.elmo.cache_dir).parent / "finetuned" / key
    summary_path = out / "summary.json"
    if not (summary_path.exists() and json.loads(summary_path.read_text())["progress"].get("finished")):
        out.mkdir(parents=True, exist_ok=True)
        (out / "task_train.txt").write_text(train_text, encoding="utf-8")
        (out / "task_dev.txt").write_text(dev_text, encoding="utf-8")
        print(f"fine-tuning the biLM on {task.name} training text -> {out}", flush=True)
        pretrain(parse_args(["--init-from", str(options.parent), "--train", str(out / "task_train.txt"),
                             "--heldout", str(out / "task_dev.txt"), "--out", str(out),
                             "--epochs", str(cfg.elmo.finetune_epochs), "--seed", "0",
                             "--device", cfg.device, "--no-progress"]))
    summary = json.loads(summary_path.read_text())
    report = {"dir": str(out), "dev_perplexity_before": summary["heldout_perplexity_before"]["average"],
              "dev_perplexity_after": summary["heldout_perplexity"]["average"], "tokens": summary["progress"]["tokens"]}
    return out / "options.json", out / "weights.hdf5", report


def make_cache(cfg: DictConfig, options: Path, weights: Path) -> ActivationCache:
    return ActivationCache(cfg.elmo.cache_dir, options, weights, state=cfg.elmo.state, batch_size=cfg.elmo.batch_size,
                           dtype=cfg.elmo.cache_dtype, device=cfg.device, warmup_batches=cfg.elmo.warmup_batches)


def bilm_layers(cfg: DictConfig, task, splits: dict, options: Path, weights: Path) -> dict:
    """Per split, the biLM layers (cached on disk, or computed per batch with elmo.cache=false)."""
    if elmo_position(cfg) == "none":
        return {}
    if not cfg.elmo.cache:
        if cfg.elmo.state not in ("stateless", "stateful"):
            raise SystemExit(f"error: elmo.state={cfg.elmo.state} needs elmo.cache=true (the warm-up runs while caching)")
        bilm = load_bilm(options, weights, stateful=cfg.elmo.state == "stateful", device=cfg.device)
        return {s: LiveLayers(bilm, task.sentences(ds)) for s, ds in splits.items()}
    cache = make_cache(cfg, options, weights)
    return {s: cache.get(task.sentences(ds), f"{task.name}/{s}") for s, ds in splits.items()}


def elmo_position(cfg: DictConfig) -> str:
    """``elmo.position``, with ``paper`` meaning the task's own setting in the paper."""
    return cfg.task.elmo_position if cfg.elmo.position == "paper" else cfg.elmo.position


def build_features(cfg: DictConfig, options: Path) -> ElmoFeatures:
    opts = read_options(options)
    return ElmoFeatures(elmo_position(cfg), opts.n_layers + 1, 2 * opts.projection_dim, cfg.elmo.mix,
                        cfg.elmo.dropout, cfg.elmo.layer_norm)


def subsample(ds, fraction: float):
    """The first ⌈fraction·n⌉ examples of a fixed permutation: smaller fractions are subsets of larger."""
    if not 0 < fraction <= 1:
        raise SystemExit(f"error: data.fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return ds
    order = np.random.default_rng(12345).permutation(len(ds))
    return ds.select(sorted(order[: max(1, math.ceil(fraction * len(ds)))].tolist()))


def training_splits(cfg: DictConfig, task) -> dict:
    """The task's splits (train and dev required), train cut to ``data.fraction``."""
    splits = task.load_splits(cfg.data)
    for required in ("train", "dev"):
        if required not in splits:
            raise SystemExit(f"error: no {required} split (set data.dir or data.{required}_path)")
    if cfg.data.get("fraction", 1.0) != 1.0:  # prepare again: per-split row bookkeeping must match the subset
        splits["train"] = task.prepare(subsample(splits["train"], cfg.data.fraction), "train")
    return splits


def comparable(resolved: dict) -> dict:
    """What decides a run's result: ``elmo.position=paper`` is the task's own position spelled out."""
    out = {k: v for k, v in resolved.items() if k not in VOLATILE}
    elmo, task = out.get("elmo") or {}, out.get("task") or {}
    if elmo.get("position") == "paper" and task.get("elmo_position"):
        out["elmo"] = {**elmo, "position": task["elmo_position"]}
    return out


def write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def config_hash(resolved: dict) -> str:
    return hashlib.sha256(json.dumps(comparable(resolved), sort_keys=True).encode()).hexdigest()[:16]


def finished_run(out_dir: Path, runs_root: Path, digest: str) -> dict | None:
    """A results.json for this configuration: in this run directory, or anywhere under runs_root
    (the same configuration launched under another name)."""
    candidates = [out_dir / "results.json"] + (sorted(runs_root.glob("**/results.json")) if runs_root.exists() else [])
    for path in candidates:
        if path.exists():
            try:
                previous = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            stored = previous.get("config")  # recomputed, so records written by older versions still match
            if previous.get("config_hash") == digest or (isinstance(stored, dict) and config_hash(stored) == digest):
                return previous
    return None


def hydra_choice(group: str) -> str | None:
    from hydra.core.hydra_config import HydraConfig
    return HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None


def run_metadata(cfg: DictConfig, out_dir: Path, options: Path, weights: Path, resolved: dict, digest: str) -> dict:
    """What every results.json records besides its metrics: biLM identity, hardware, date, command."""
    return {"bilm": {"options": str(options), "weights": str(weights), "sha256": file_sha256(weights)},
            "hardware": {"machine": platform.machine(), "cpus": os.cpu_count(),
                         "torch_threads": torch.get_num_threads(), "device": cfg.device},
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["python", "run.py", *sys.argv[1:]]), "ablation": hydra_choice("ablation"),
            "profile": hydra_choice("profile"), "run_dir": str(out_dir), "config_hash": digest, "config": resolved}


def run_probe(cfg: DictConfig, out_dir: Path, options: Path, weights: Path, resolved: dict, digest: str) -> dict:
    """§5.3 layer probes: per-layer accuracy from cached biLM activations."""
    cache = make_cache(cfg, options, weights)
    started = time.time()
    results = PROBES[cfg.task.name](cfg, cache, run_metadata(cfg, out_dir, options, weights, resolved, digest))
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
    options, weights = resolve_bilm(cfg)
    if cfg.task.name in PROBES:
        return run_probe(cfg, out_dir, options, weights, resolved, digest)
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    print("data: " + json.dumps(getattr(task, "data_stats", {})), flush=True)
    task.build_vocab(splits["train"])
    finetune = None
    if cfg.elmo.finetune and elmo_position(cfg) != "none":
        options, weights, finetune = finetuned_bilm(cfg, task, splits, options, weights)
    layers = bilm_layers(cfg, task, splits, options, weights)
    set_seed(cfg.seed)
    features = build_features(cfg, options)
    model = task.build_model(features)
    result = fit(task, model, splits, layers, cfg, out_dir)
    prediction_files = {split: str(task.write_predictions(splits[split], preds, out_dir / f"{split}_predictions"))
                        for split, preds in result["predictions"].items()}
    results = {
        **run_metadata(cfg, out_dir, options, weights, resolved, digest),
        "task": task.name, "metric": task.metric, "dev": result["dev"], "test": result.get("test"),
        "elmo_position": elmo_position(cfg), "train_examples": len(splits["train"]),
        "mixing_weights": features.layer_weights(), "best_epoch": result["best_epoch"], "epochs": result["epochs"],
        "train_seconds": result["train_seconds"], "data_stats": getattr(task, "data_stats", {}),
        "prediction_files": prediction_files, "bilm_finetune": finetune,
    }
    torch.save({"config": resolved, "task_state": task.state(), "model": model.state_dict(),
                "bilm_sha256": results["bilm"]["sha256"]}, out_dir / "best.pt")
    write_json_atomic(results_path, results)
    print(f"dev {task.metric}: {result['dev'][task.metric]:.2f}  ->  {results_path}", flush=True)
    return results


def finetune(cfg: DictConfig, out_dir: Path) -> dict:
    """``mode=finetune`` (§3.4, Table 7): only fine-tune the biLM on the task's training text and report
    the dev perplexity before and after; the result is the same cached biLM that ``elmo.finetune=true``
    runs use."""
    options, weights = resolve_bilm(cfg)
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    meta = run_metadata(cfg, out_dir, options, weights, resolved, config_hash(resolved))  # the base biLM's identity
    _, _, report = finetuned_bilm(cfg, task, splits, options, weights)
    report = {**meta, "task": task.name, "train_examples": len(splits["train"]), "bilm_finetune": report}
    write_json_atomic(out_dir / "finetune.json", report)
    print(json.dumps(report, indent=2), flush=True)
    return report


def evaluate(cfg: DictConfig, out_dir: Path) -> dict:
    if not cfg.checkpoint:
        raise SystemExit("error: mode=evaluate needs checkpoint=PATH/best.pt")
    try:
        ckpt = torch.load(cfg.checkpoint, map_location="cpu", weights_only=True)
    except Exception as e:
        raise SystemExit(f"error: {cfg.checkpoint}: unreadable checkpoint ({type(e).__name__}: {e})") from None
    saved = OmegaConf.create(ckpt["config"])
    saved.device = cfg.device
    test_path = cfg.data.get("test_path")
    if not test_path:
        raise SystemExit("error: mode=evaluate needs data.test_path=FILE")
    options, weights = resolve_bilm(saved)
    if file_sha256(weights) != ckpt["bilm_sha256"]:
        raise SystemExit(f"error: {weights} is not the biLM this model was trained with")
    task = make_task(saved)
    task.load_state(ckpt["task_state"])
    splits = task.load_splits(OmegaConf.create({"test_path": test_path}))
    features = build_features(saved, options)
    model = task.build_model(features)
    model.load_state_dict(ckpt["model"])
    layers = bilm_layers(saved, task, splits, options, weights)
    from .trainer import predict
    predictions = predict(task, model, splits["test"], layers.get("test"), saved.trainer.eval_batch_size)
    metrics = task.score(splits["test"], predictions)
    written = task.write_predictions(splits["test"], predictions, out_dir / f"{Path(test_path).stem}_predictions")
    report = {"checkpoint": str(cfg.checkpoint), "test_path": str(test_path), "metrics": metrics,
              "prediction_file": str(written)}
    write_json_atomic(out_dir / "eval_results.json", report)
    print(json.dumps(report, indent=2))
    return report
