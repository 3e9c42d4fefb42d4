"""``mode=dry_run``: what ``mode=train`` would do with a configuration, and whether it fits this machine,
without building a model or writing a file (the run machinery of Peters et al. 2018's experiments, §4).

    .venv/bin/python run.py task=TASK profile=paper source=local +ablation=elmo mode=dry_run

It composes and validates the configuration as a run does, computes the run's identity, reads the
data (so a malformed file is reported now, with its file and line), and says:

* where the run would write and whether it would be skipped (a record of this identity exists under
  the runs root), resumed (a training state of this identity is in its directory) or trained;
* the training examples and batches per epoch;
* with ELMo and the activation cache: the cache entries still missing, their size, and whether they
  fit ``cache.max_gb`` and the free disk (the check a run makes before writing any);
* how long it would take and how much memory it needs, from a few updates of its real model timed
  here now (``time_estimate``), against the memory available now;
* what each count it prints means (``counts_explained``).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from encoders.activation_cache import size_text
from suite_common.errors import WeightsError

from . import train_state
from .hydra_dirs import run_dir_name
from .pipeline import build_run
from .plan import RunPlan
from .run_config import RunConfig
from .run_directories import finished_run, read_record
from .time_estimate import COUNTS, estimate, measure
from .trainer import epochs_for, passes_per_epoch


def launch_dir(run: RunConfig) -> Path:
    """The directory ``mode=train`` would be launched in: the runs root, the task, the overrides' name."""
    from hydra.core.hydra_config import HydraConfig

    overrides = HydraConfig.get().job.override_dirname if HydraConfig.initialized() else ""
    return Path(run.runs_root) / str(run.task.name) / run_dir_name(overrides)


def memory_available_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return None


def cache_plan(encoder, named: dict[str, list[list[str]]]) -> dict:
    """The activation cache entries still missing for ``named`` (split -> sentences; splits with the
    same text share one entry), their size, and whether they fit ``cache.max_gb`` and the free disk
    under the cache root: the check a run makes before writing any (``ActivationCache.check_budget``)."""
    cache = encoder.cache()
    missing, keys = {}, set()
    for name, sentences in named.items():
        if not cache.has(sentences) and cache.key(sentences) not in keys:
            missing[name] = sentences
            keys.add(cache.key(sentences))
    entries = {cache.key(s): [cache.planned_bytes(s), sum(map(len, s))] for s in missing.values()}
    need = sum(size for size, _ in entries.values())
    existing = cache.root
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    max_gb = encoder.cache_config.max_gb
    fits = need <= free and (max_gb is None or need <= max_gb * 1e9)
    return {
        "root": str(cache.root),
        "missing": sorted(missing),
        "bytes_needed": need,
        "entries": entries,  # key -> [bytes, tokens] (the dry run turns tokens into seconds to build)
        "needed": size_text(need),
        "free": size_text(free),
        "max_gb": max_gb,
        "fits": fits,
    }


_MEASURED: dict[str, dict] = {}  # a sweep's runs that differ only in their seed are one shape: timed once


def measured_once(plan: RunPlan, built, batches) -> dict:
    shape = json.dumps({k: v for k, v in plan.resolved.items() if k != "seed"}, sort_keys=True, default=str)
    if shape not in _MEASURED:
        _MEASURED[shape] = measure(built, batches)
    return _MEASURED[shape]


def dry_run(run: RunConfig, out_dir: Path | None = None, estimate_finished: bool = False) -> dict:
    """What ``mode=train`` would do with ``run`` (printed, and returned as a dict). A configuration that
    already has its record says so at once, unestimated, unless ``estimate_finished`` (the estimate's check
    against finished runs, ``benchmarks.dry_run_check``)."""

    plan = RunPlan.resolve(run)
    where = launch_dir(run)
    previous = finished_run(
        where, Path(run.runs_root), plan.digest, plan.record_name, keep_index=False
    )  # writes nothing
    report = {"task": str(run.task.name), "digest": plan.digest, "run_dir": str(where), "kind": plan.kind}
    state = where / "train_state.pt"
    if previous is not None:  # said at once: nothing to read, build or time for a run that would not train
        report["would"] = f"skip: this configuration already has its record ({previous['run_dir']})"
        if not estimate_finished:
            print(json.dumps(report, indent=2), flush=True)
            return report
    elif state.exists():
        try:
            report["would"] = f"resume after epoch {train_state.read(state, plan.digest)['epoch']} ({state})"
        except WeightsError as e:  # another run's state, or not a state: a launch would stop here
            report["would"] = f"stop: {e}"
    else:
        other = read_record(where / plan.record_name) if (where / plan.record_name).exists() else None
        report["would"] = "train" + (
            f" (recorded in {where.name}@{plan.digest}: {where.name} holds another identity)"
            if other is not None
            else ""
        )
    if plan.kind == "task":
        built = build_run(plan, layers=False, finetune=False)  # a dry run estimates the fine-tuning, does not do it
        task, splits = built.task, built.splits
        report["data"] = task.data_stats
        # as the trainer makes them: shuffled (a task may batch training apart from evaluation, as SQuAD's
        # clustered batches do), and repeated passes_per_epoch times (trainer.equal_updates, data.fraction)
        batches = task.batches(splits["train"], int(plan.run.trainer.batch_size), shuffle=True, rng=random.Random(0))
        report["train_examples"] = len(splits["train"])
        report["batches_per_epoch"] = len(batches) * passes_per_epoch(plan.run)
        report["max_epochs"] = epochs_for(plan.run.trainer, report["batches_per_epoch"])
        named = {f"{task.name}/{name}": task.sentences(ds) for name, ds in splits.items()}
        cache_tokens = live_tokens = 0
        if plan.run.reads_encoder and plan.encoder.cache_config.enabled:
            report["cache"] = cache_plan(plan.encoder, named)
            cache_tokens = sum(sum(map(len, named[name])) for name in report["cache"]["missing"])
        elif plan.run.reads_encoder:
            live_tokens = sum(sum(map(len, s)) for s in named.values())
        measured = measured_once(plan, built, batches)
        report.update(
            estimate(
                measured,
                report["batches_per_epoch"],
                report["max_epochs"],
                len(splits["dev"]),
                cache_tokens,
                live_tokens,
                plan.finetuned_encoder,
            )
        )
        report["memory_needed"] = f"{measured['peak_memory_gb']:.1f} GB (this process's peak while timing its updates)"
        report["peak_memory_gb"] = round(measured["peak_memory_gb"], 2)
        rate = measured["encoder_tokens_per_second"]
        for entry in (report.get("cache") or {}).get("entries", {}).values():
            entry[1] = round(entry[1] / rate, 1) if rate else 0.0  # tokens -> seconds at the measured rate
        report["counts_explained"] = counts_explained(task)
    memory = memory_available_gb()
    report["memory_available"] = f"{memory:.1f} GB" if memory is not None else "unknown"
    print(json.dumps(report, indent=2))
    cache = report.get("cache")
    if cache and not cache["fits"]:
        print(
            f"does NOT fit: the activation cache needs {cache['needed']} ({cache['free']} free, cache.max_gb="
            f"{cache['max_gb']}); use cache.dtype=float16 or cache.enabled=false",
            flush=True,
        )
    elif cache:
        print(f"fits: the activation cache needs {cache['needed']} more ({cache['free']} free)", flush=True)
    return report


def counts_explained(task) -> dict[str, str]:
    """What each count a dry run prints means: the suite's ``COUNTS`` and the task's own ``Task.COUNTS``."""
    meanings = {**COUNTS, **task.COUNTS}
    keys = ["train_examples", "batches_per_epoch", "max_epochs"]
    keys += sorted({key for stats in task.data_stats.values() for key in stats})
    return {k: meanings[k] for k in keys if k in meanings}
