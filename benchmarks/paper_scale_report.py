"""The report of ``benchmarks.paper_scale``: projections of its measured rates to the paper's full training
sets (Peters et al. 2018 §4 and appendix A), whether one run fits this machine, and the Markdown table."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import torch

from encoders.activation_cache import size_text
from suite_common.machine import cpu_model


def projection(m: dict) -> dict:
    f = m["full"]
    updates = int(np.ceil(f["examples"] / m["examples_per_update"]))
    tune = m.get("finetune")
    return {
        "cache_gb": {d: f["tokens"] * b / 1e9 for d, b in m["cache_bytes_per_token"].items()},
        "bilm_hours": f["tokens"] / m["bilm_tokens_per_s"] / 3600,
        "finetune_hours": f["tokens"] * tune["epochs"] / tune["tokens_per_s"] / 3600 if tune else 0.0,
        "updates_per_epoch": updates,
        "epoch_hours_elmo": updates * m["s_per_update_elmo"] / 3600,
        "epoch_hours_baseline": updates * m["s_per_update_baseline"] / 3600,
        "paper_hours_elmo": updates * m["s_per_update_elmo"] * m["max_epochs"] / 3600,
        "paper_hours_baseline": updates * m["s_per_update_baseline"] * m["max_epochs"] / 3600,
    }


def optional(values: dict | None, key: str, spec: str) -> str:
    """``values[key]`` formatted, or ``-`` where the task has no such step."""
    return format(values[key], spec) if values else "-"


def device_text(device: str) -> str:
    """``cpu`` or the GPU's name, so that the rates say what device made them."""
    if device.startswith("cuda"):
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    return device


def machine() -> dict:
    """This machine's free disk (where the activation cache goes: ``.cache``), memory and CPUs."""
    import shutil

    where = Path(".cache") if Path(".cache").exists() else Path(".")
    mem = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                mem = int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return {
        "disk_free_gb": shutil.disk_usage(where).free / 1e9,
        "disk_path": str(where.resolve()),
        "memory_available_gb": mem,
        "cpus": os.cpu_count(),
    }


def verdicts(results: list[dict], out: Path, day_hours: float = 24.0, device: str = "cpu") -> list[str]:
    """One line per task: whether its full-scale ELMo run fits this machine's free disk (the float32 or
    float16 cache, or none: ``cache.enabled=false``), its available memory (the measured peak) and a
    day of one core's time for the biLM fine-tuning where there is one, the cache and the training, at the
    measured rates."""
    here = machine()
    lines = [
        f"Free disk under {here['disk_path']}: {here['disk_free_gb']:.0f} GB; available memory "
        f"{here['memory_available_gb']:.1f} GB; {here['cpus']} CPUs (measured when this report was written).",
        "",
    ]
    for m in results:
        p = projection(m)
        f32, f16 = p["cache_gb"]["float32"], p["cache_gb"]["float16"]
        disk = (
            "cache fits in float32"
            if f32 < here["disk_free_gb"]
            else "cache fits only as cache.dtype=float16"
            if f16 < here["disk_free_gb"]
            else "cache does not fit: cache.enabled=false (the biLM runs on every batch, much slower)"
        )
        ram = m["peak_rss_mb"] / 1e3
        fits = not here["memory_available_gb"] or ram < here["memory_available_gb"]
        memory = f"memory {'fits' if fits else 'does NOT fit'} ({ram:.1f} GB peak on the sample)"
        hours = p["finetune_hours"] + p["bilm_hours"] + p["paper_hours_elmo"]
        where = "at the measured thread count" if device == "cpu" else f"on {device}"
        time = f"{hours:.0f} h {where} to the paper's epochs: " + (
            "fits a day"
            if hours <= day_hours
            else f"{hours / day_hours:.1f} days; runs resume, so spread it over several"
        )
        lines.append(f"- {m['task']}: {disk}; {memory}; {time}.")
    return lines


def report(results: list[dict], args, bilm: str, started: str) -> str:
    lines = [
        "# The paper profile at the paper's scale: measured rates and projections",
        "",
        f"Command: `python -m benchmarks.paper_scale {' '.join(args.argv)}`".rstrip(),
        "",
        f"Hardware: {platform.machine()}, {cpu_model()}, {device_text(args.device)}, {args.threads} torch thread(s) "
        f"(of {os.cpu_count()} CPUs), torch {torch.__version__}. "
        f"Date: {started}. biLM: {bilm}.",
        "",
        "## Measured on a sample of each task's local data (`profile=paper`, `source=local`)",
        "",
        "| task | sample (examples / texts / tokens) | biLM tokens/s | cache bytes/token f32 / f16 | planned / written "
        "| s/update ELMo | s/update baseline | examples/update | fine-tuning tokens/s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        b, r = m["cache_bytes_per_token"], m["cache_planned_over_written"]
        lines.append(
            f"| {m['task']} | {m['sample_examples']} / {m['sample_texts']} / {m['sample_tokens']} "
            f"| {m['bilm_tokens_per_s']:.0f} | {b['float32']:.0f} / {b['float16']:.0f} "
            f"| {r['float32']:.4f} / {r['float16']:.4f} | {m['s_per_update_elmo']:.3f} "
            f"| {m['s_per_update_baseline']:.3f} | {m['examples_per_update']:.1f} "
            f"| {optional(m.get('finetune'), 'tokens_per_s', '.0f')} | {m['peak_rss_mb']:.0f} |"
        )
    lines += [
        "",
        "## Projected to the paper's full training sets "
        f"({'this CPU, same thread count' if args.device == 'cpu' else device_text(args.device)})",
        "",
        "| task | training set | examples | distinct texts | tokens | fine-tuning hours | cache f32 / f16 "
        "| biLM hours | updates/epoch | hours/epoch ELMo / baseline | epochs "
        "| hours to the paper's epochs ELMo / baseline |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        f, p = m["full"], projection(m)
        lines.append(
            f"| {m['task']} | {f['name']} | {f['examples']:,} | {f['texts']:,} | {f['tokens']:,} "
            f"| {optional(p if m.get('finetune') else None, 'finetune_hours', '.1f')} "
            f"| {size_text(p['cache_gb']['float32'] * 1e9)} / {size_text(p['cache_gb']['float16'] * 1e9)} "
            f"| {p['bilm_hours']:.2f} | {p['updates_per_epoch']:,} "
            f"| {p['epoch_hours_elmo']:.2f} / {p['epoch_hours_baseline']:.2f} | {m['max_epochs']} "
            f"| {p['paper_hours_elmo']:.0f} / {p['paper_hours_baseline']:.0f} |"
        )
    lines += ["", "## Does one run fit this machine?", "", *verdicts(results, args.out, device=args.device), ""]
    lines += ["", "Where the full-set numbers come from:", ""]
    lines += [
        f"- {m['task']}: {m['full']['source']}"
        + (
            f" (mean tokens per text used: {', '.join(f'{k} {v:.1f}' for k, v in m['full']['lengths'].items())})"
            if m["full"].get("lengths")
            else ""
        )
        for m in results
    ]
    lines += [
        "",
        "Reading the table: *planned / written* is the size a run estimates before building its cache "
        "(`ActivationCache.planned_bytes`, the check behind `cache.max_gb`) over the bytes actually "
        "written for the sample. Hours per epoch are training updates only (no dev evaluation); hours to the "
        "paper's epochs multiply by `trainer.max_epochs` of `profile=paper`, an upper bound when early stopping "
        "ends a run sooner. The biLM hours are one pass over the distinct texts, shared by every run on the "
        "same data (the cache). The fine-tuning hours (SQuAD and SNLI, whose paper-profile biLM is first trained "
        "further on the task's text, `encoder.finetune`) are `encoder.finetune_epochs` passes over the same "
        "distinct texts at the measured fine-tuning rate, training updates only (not its held-out perplexity "
        "before and after); they come before the biLM hours, and one fine-tuning is shared by every run on the "
        "same data. The fine-tuning rate is for a softmax over the shipped vocabulary "
        f"({next((m['finetune']['vocabulary'] for m in results if m.get('finetune')), 0):,} words); the "
        "original's 793,471-word softmax would cost more. The verdicts above count fine-tuning, cache and "
        "training. Speeds are for the stand-in data's lengths; the paper's data may differ.",
        "",
    ]
    return "\n".join(lines)
