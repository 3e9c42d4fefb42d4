"""Recipes behind ``run.py`` (Peters et al. 2018 §3.3-3.4): train a task model with ELMo and write
its record (``train``), score a trained model on a file (``evaluate``), fine-tune the biLM on a
task's text only (``finetune``, Table 7), and the layer probes (§5.3).

What varies lives in ``conf/``; what a run is (its kind, ELMo position, encoder, identity and
directory) is decided once by ``run_plan.RunPlan``; its record is a ``run_record.Record``; the
training loop is ``trainer``.
"""

from __future__ import annotations

import datetime
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from encoders import BiLMEncoder, encoder_for
from encoders.bilm import finetune_key
from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import ConfigError, DataError, WeightsError
from tasks.base import TaskSplit
from tasks.layers import ElmoFeatures
from tasks.registry import is_probe_function, probe_function, task_class

from .config_layout import current_layout
from .identity import content_sha256
from .plan import PROBE_VERSION, RunPlan
from .record import Record
from .run_directories import mark_finished, write_json_atomic
from .settings import effective_position, evaluate_overrides, uses_encoder
from .trainer import TrainerConfig, fit, predict, set_seed


def make_task(cfg: DictConfig):
    return task_class(cfg.task.name)(cfg.task)


def finetuned_base_sha256(record: dict) -> str | None:
    """For a record written before identities existed by a run with a fine-tuned biLM (which stored
    only the fine-tuned weights' hash): the base biLM it was fine-tuned from, found among the
    configured and embedded biLMs by recomputing the fine-tuned model's directory key."""
    from elmo_core.pretrained import model_dir

    cfg = OmegaConf.create(current_layout(record["config"]))
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    texts = task_text(task, splits["train"]), task_text(task, splits["dev"])
    candidates = [Path(cfg.encoder.weights)] if cfg.encoder.weights else []
    candidates += [model_dir(name) / "weights.hdf5" for name in ("small", "small-v1")]
    wanted = Path(record["bilm_finetune"]["dir"]).name
    for weights in candidates:
        sha = BiLMEncoder(weights.with_name("options.json"), weights).sha256 if weights.exists() else None
        if sha and finetune_key(sha, *texts, cfg.encoder.finetune_epochs) == wanted:
            return sha
    return None


def task_version(name: str) -> int:
    return PROBE_VERSION if is_probe_function(name) else task_class(name).VERSION


def build_features(cfg: DictConfig, source) -> ElmoFeatures:
    num_layers, dim = source.layer_shape()
    return ElmoFeatures(
        effective_position(cfg), num_layers, dim, cfg.elmo.mix, cfg.elmo.dropout, cfg.elmo.layer_norm, cfg.elmo.l2
    )


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


def with_layers(cfg: DictConfig, task, splits: dict, source) -> dict[str, TaskSplit]:
    """Each split with the layer source of its sentences (none when ELMo is not used). With the
    cache on, the entries still missing are sized first: a run whose cache would not fit
    (``cache.max_gb``, the free disk) stops before it writes any (``check_budget``)."""
    if not uses_encoder(cfg):
        return {name: TaskSplit(name, ds) for name, ds in splits.items()}
    sentences = {f"{task.name}/{name}": task.sentences(ds) for name, ds in splits.items()}
    source.check_budget(sentences)
    return {
        name: TaskSplit(name, ds, source.layer_source(sentences[f"{task.name}/{name}"], f"{task.name}/{name}"))
        for name, ds in splits.items()
    }


def task_text(task, ds) -> str:
    return "\n".join(" ".join(s) for s in task.sentences(ds)) + "\n"


def run_probe(plan: RunPlan, out_dir: Path, source) -> dict:
    """§5.3 layer probes: per-layer accuracy from the encoder's cached activations."""
    cfg, started = plan.cfg, time.time()
    results = probe_function(cfg.task.name)(cfg, source.cache(), plan.metadata(out_dir, source))
    results.update(task=cfg.task.name, train_seconds=round(time.time() - started, 1), elmo_position=plan.position)
    Record.from_dict(results).write(out_dir / "results.json")
    mark_finished(out_dir)
    print(json.dumps({"task": cfg.task.name, **results["dev"]}, indent=2))
    return results


def train(cfg: DictConfig, out_dir: Path) -> dict:
    plan = RunPlan.resolve(cfg, task_version(cfg.task.name))
    source = plan.source
    out_dir, previous = plan.prepare(out_dir)
    if previous is not None:
        announce(previous, out_dir / "results.json")
        return previous
    results_path = out_dir / "results.json"
    if plan.kind == "probe":
        return run_probe(plan, out_dir, source)
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    print("data: " + json.dumps(task.data_stats), flush=True)
    for warning in task.data_warnings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    task.build_vocab(splits["train"])
    if cfg.encoder.get("finetune", False) and plan.position != "none":
        source = source.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    data = with_layers(cfg, task, splits, source)
    set_seed(cfg.seed)
    features = build_features(cfg, source)
    model = task.build_model(features)
    state_path = out_dir / "train_state.pt"  # resumed when a stopped run of this identity left one
    result = fit(task, model, data, TrainerConfig.from_config(cfg), state_path=state_path, run=plan.digest)
    prediction_files = {
        split: str(task.write_predictions(splits[split], preds, out_dir / f"{split}_predictions"))
        for split, preds in result["predictions"].items()
    }
    record = Record(
        **plan.metadata(out_dir, source),
        task=task.name,
        metric=task.metric,
        dev=result["dev"],
        test=result.get("test"),
        elmo_position=plan.position,
        train_examples=len(splits["train"]),
        mixing_weights=features.layer_weights(),
        best_epoch=result["best_epoch"],
        epochs=result["epochs"],
        train_seconds=result["train_seconds"],
        data_stats=task.data_stats,
        data_warnings=task.data_warnings(),
        prediction_files=prediction_files,
        bilm_finetune=source.finetune_report,
        resumed_from_epoch=result.get("resumed_from_epoch"),
    )
    torch_save_atomic(
        {
            "config": plan.resolved,
            "task_state": task.state(),
            "model": model.state_dict(),
            "bilm_sha256": source.sha256,
        },  # the encoder's digest (biLM weights or Transformer files)
        out_dir / "best.pt",
    )  # complete or absent, like the record written after it
    record.write(results_path)
    state_path.unlink(missing_ok=True)  # the record and best.pt hold everything now
    mark_finished(out_dir)
    results = record.to_dict()
    announce(results, results_path)
    return results


def announce(record: dict, results_path: Path) -> None:
    """The run's dev metric and the command that scores a file with its model (also when a
    finished configuration is skipped: the model is in the directory that trained it)."""
    metric = record.get("metric")
    if not metric or metric not in (record.get("dev") or {}):
        return
    print(f"dev {metric}: {record['dev'][metric]:.2f}  ->  {results_path}", flush=True)
    trained_in = Path(record.get("reused_from") or record.get("run_dir") or results_path.parent)
    if (trained_in / "best.pt").is_file():
        print(
            f"score a file with it: {python_command()} run.py mode=evaluate checkpoint={trained_in} "
            "data.test_path=FILE",
            flush=True,
        )


def python_command() -> str:
    """How to call this Python from a new shell: the project's ``.venv/bin/python`` (relative when it is
    below the working directory) when it runs in a virtual environment that is not activated there."""
    exe = Path(sys.executable)
    if sys.prefix == sys.base_prefix:  # no virtual environment: whatever 'python' is
        return "python"
    try:
        return str(exe.relative_to(Path.cwd()))
    except ValueError:
        return str(exe)


def finetune(cfg: DictConfig, out_dir: Path) -> dict:
    """``mode=finetune`` (§3.4, Table 7): only fine-tune the biLM on the task's training text and report
    the dev perplexity before and after; the result is the same cached biLM that ``encoder.finetune=true``
    runs use."""
    plan = RunPlan.resolve(cfg, task_version(cfg.task.name), finetune=True)
    source = plan.source
    if source.kind != "bilm":
        raise ConfigError(f"mode=finetune fine-tunes the biLM (§3.4); it is not available with encoder={source.kind}")
    out_dir, previous = plan.prepare(out_dir)
    if previous is not None:
        return previous
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    meta = plan.metadata(out_dir, source)  # the base biLM's identity
    tuned = source.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
    record = Record(**meta, task=task.name, train_examples=len(splits["train"]), bilm_finetune=tuned.finetune_report)
    record.write(out_dir / "finetune.json")
    report = record.to_dict()
    mark_finished(out_dir)
    print(json.dumps(report, indent=2), flush=True)
    return report


def command_line_overrides(cfg: DictConfig, prefixes: tuple[str, ...]) -> dict:
    """The keys under ``prefixes`` that this command line set, with their composed values."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return {}
    keys = [o.lstrip("+~").split("=", 1)[0] for o in HydraConfig.get().overrides.task]
    return {k: OmegaConf.select(cfg, k) for k in keys if k.startswith(prefixes)}


def checkpoint_file(checkpoint) -> Path:
    """``checkpoint=``: a run directory or its ``best.pt``."""
    if not checkpoint:
        raise ConfigError("mode=evaluate needs checkpoint=RUN_DIR (or RUN_DIR/best.pt)")
    path = Path(checkpoint)
    path = path / "best.pt" if path.is_dir() else path
    if not path.is_file():
        raise ConfigError(f"checkpoint={checkpoint}: no such run directory or best.pt")
    return path


def evaluate(cfg: DictConfig, out_dir: Path | None = None) -> dict:  # out_dir: unused, results go beside the run
    """Score a trained model on ``data.test_path``, read the way its training data was read
    (``data.format`` and reader options from the checkpoint; ``data.*``/``elmo.*`` given on the
    command line override them). Results go to ``<run dir>/evaluations/<file>@<content hash>/``:
    one directory per (checkpoint, test file)."""
    path = checkpoint_file(cfg.checkpoint)
    test_path = test_file(cfg, "evaluate")
    overrides = command_line_overrides(cfg, evaluate_overrides())
    saved, task, model, source = load_trained(path, cfg.device, overrides)
    examples, stats = task.read_file(test_path, saved.data, "test")  # the format the model was trained on
    splits, task.data_stats = {"test": task.prepare(examples, "test")}, {"test": stats}
    for warning in task.data_warnings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    test = with_layers(saved, task, splits, source)["test"]
    predictions = predict(task, model, test, saved.trainer.eval_batch_size)
    metrics = task.score(splits["test"], predictions)
    out = path.parent / "evaluations" / f"{Path(test_path).name}@{content_sha256(test_path)[:12]}"
    out.mkdir(parents=True, exist_ok=True)
    written = task.write_predictions(splits["test"], predictions, out / "predictions")
    report = {
        "checkpoint": str(path),
        "test_path": str(test_path),
        "test_sha256": content_sha256(test_path),
        "task": task.name,
        "metric": task.metric,
        "metrics": metrics,
        "data_stats": task.data_stats,
        "data_warnings": task.data_warnings(),
        "prediction_file": str(written),
        "data_format": saved.data.get("format") or next(iter(task.readers), None),  # the reader used
        "overrides": {k: str(v) for k, v in overrides.items()},
        "bilm": source.identity(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    write_json_atomic(out / "eval_results.json", report)
    print(json.dumps(report, indent=2))
    print(f"-> {out / 'eval_results.json'}", flush=True)
    return report


def test_file(cfg: DictConfig, mode: str) -> Path:
    test_path = cfg.data.get("test_path")
    if not test_path:
        raise ConfigError(f"mode={mode} needs data.test_path=FILE")
    if not Path(test_path).is_file():
        raise DataError(f"{test_path}: no such file (data.test_path)")
    return Path(test_path)


def load_trained(path: Path, device: str = "cpu", overrides: dict | None = None):
    """``(configuration, task, model, encoder)`` of a trained run's ``best.pt`` (tensors only), with
    ``overrides`` (key -> value: where the data and the encoder's files are) over its own settings; the
    encoder must be the one it was trained with (SHA-256), a fine-tuned biLM included."""
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise WeightsError(f"{path}: unreadable checkpoint ({type(e).__name__}: {e})") from None
    saved = OmegaConf.create(current_layout(ckpt["config"]))  # a checkpoint of either layout
    saved.device = device
    for key, value in (overrides or {}).items():
        OmegaConf.update(saved, key, value, force_add=True)
    source = encoder_for(saved)
    if saved.encoder.get("finetune", False) and effective_position(saved) != "none":
        source = finetuned_source(saved, source)  # the model read the fine-tuned biLM's layers, not the base's
    if source.sha256 != ckpt["bilm_sha256"]:
        raise WeightsError(
            f"{source.files} is not the {'biLM' if source.kind == 'bilm' else 'model'} this model "
            f"was trained with (SHA-256 {ckpt['bilm_sha256'][:12]}...){shipped_hint(ckpt['bilm_sha256'])}"
        )
    task = make_task(saved)
    task.load_state(ckpt["task_state"])
    model = task.build_model(build_features(saved, source))
    model.load_state_dict(ckpt["model"])
    model.to(device).eval()
    return saved, task, model, source


def finetuned_source(cfg: DictConfig, source):
    """The biLM a run with ``encoder.finetune=true`` trained on: the base fine-tuned on the run's own
    training text (the shared copy under the cache's ``finetuned/``, made again if it is not there)."""
    task = make_task(cfg)
    splits = training_splits(cfg, task)
    return source.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)


def shipped_hint(sha256: str) -> str:
    """Which shipped biLM has these weights, as the overrides that select it."""
    from elmo_core import file_sha256
    from elmo_core.pretrained import ROOT

    for d in sorted(ROOT.iterdir()):
        if (d / "weights.hdf5").exists() and file_sha256(d / "weights.hdf5") == sha256:
            rel = d.relative_to(ROOT.parents[1])
            return (
                f"; it is the shipped {d.name}: add encoder.options={rel}/options.json "
                f"encoder.weights={rel}/weights.hdf5"
            )
    return ""
