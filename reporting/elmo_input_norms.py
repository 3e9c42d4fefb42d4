"""What the ELMo vector weighs against the word vector at a task model's input (Peters et al. 2018
§3.3: ELMo_k = γ Σ_j s_j h_kj is concatenated with x_k; "a moderate amount of dropout" on it), per
trained run, from its checkpoint: the mean Euclidean norm per dev token of the token embedding x_k
and of the input ELMo vector, their ratio, the learned γ and s_j, the ELMo dropout, and the dev
metric with the lowest per-class accuracy (SICK): what shows why ELMo at ESIM's input collapses
SICK onto two classes at ELMo dropout 0.5.

    python -m reporting.elmo_input_norms RUN_DIR... [--out FILE.md]

Each ``RUN_DIR`` holds ``best.pt`` and ``results.json`` (a run of ``run.py`` with ELMo at the input).
The dev split is read as the run read it, through the same activation cache.
"""

from __future__ import annotations

import argparse
import datetime
import platform
from pathlib import Path

import torch

from encoders import encoder_for
from experiments.pipeline import build_features, make_task, training_splits, with_layers
from experiments.record import Record
from experiments.run_config import as_run
from reporting.side_report import emit
from suite_common.checkpoints import load_tensors


def input_norms(run_dir: Path) -> dict:
    """Mean norms over the dev tokens of one run's input: the token embedding and the input ELMo mix."""
    ckpt = load_tensors(run_dir / "best.pt")
    cfg = as_run(ckpt["config"])
    source = encoder_for(cfg)
    task = make_task(cfg)
    task.load_state(ckpt["task_state"])
    splits = training_splits(cfg, task)
    dev = with_layers(cfg, task, {"dev": splits["dev"]}, source)["dev"]
    model = task.build_model(build_features(cfg, source))
    model.load_state_dict(ckpt["model"])
    model.eval()
    if "input" not in model.features.slots:
        raise SystemExit(f"error: {run_dir}: ELMo is not at this run's input (position {model.features.position})")
    sums = {"word": 0.0, "elmo": 0.0, "tokens": 0}
    with torch.no_grad():
        for idx in task.batches(dev.examples, cfg.trainer.eval_batch_size, shuffle=False):
            batch = task.make_batch(dev, idx)
            for side in [batch[s] for s in ("premise", "hypothesis")] if "premise" in batch else [batch]:
                word = model.embedder(side["word_ids"], side["char_ids"])  # x_k, as the model's input gets it
                elmo = model.features(side)["input"]
                mask = side["mask"].bool()
                sums["word"] += word.norm(dim=-1)[mask].sum().item()
                sums["elmo"] += elmo.norm(dim=-1)[mask].sum().item()
                sums["tokens"] += int(mask.sum())
    return {"word": sums["word"] / sums["tokens"], "elmo": sums["elmo"] / sums["tokens"], "tokens": sums["tokens"]}


def row(run_dir: Path) -> str:
    record = Record.read(run_dir / "results.json")
    norms = input_norms(run_dir)
    mix = (record.mixing_weights or {}).get("input", {})
    per_class = (record.dev or {}).get("per_class_accuracy") or {}
    lowest = min(per_class.items(), key=lambda kv: kv[1]) if per_class else None
    return (
        f"| {record.task} | {record.profile} | {record.setting} ({record.position}) | {record.seed} "
        f"| {record.run.elmo.dropout} | {record.value:.2f} | "
        f"{f'{lowest[0]} {lowest[1]:.1f}' if lowest else '-'} | {mix.get('gamma', float('nan')):.3f} | "
        f"{' / '.join(f'{s:.2f}' for s in mix.get('s', []))} | {norms['word']:.2f} | {norms['elmo']:.2f} | "
        f"{norms['elmo'] / norms['word']:.2f} | `{run_dir}` |"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (best.pt and results.json)")
    ap.add_argument("--out", type=Path, help="Markdown file to write (default: print only)")
    args = ap.parse_args(argv)
    lines = [
        "| task | profile | ablation (ELMo position) | seed | ELMo dropout | dev | lowest class (accuracy) "
        "| γ (input) | s_j (input) | "
        "‖x_k‖ | ‖ELMo_k‖ | ‖ELMo_k‖ / ‖x_k‖ | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [row(d) for d in args.runs]
    text = (
        "# The input ELMo vector against the token embedding (dev tokens, eval mode)\n\n"
        + "\n".join(lines)
        + f"\n\nMade by `python -m reporting.elmo_input_norms {' '.join(map(str, args.runs))}"
        + (f" --out {args.out}" if args.out else "")
        + f"` on {platform.machine()}, "
        + f"{datetime.datetime.now(datetime.UTC).isoformat(timespec='minutes')}.\n"
    )
    emit(text, args.out)


if __name__ == "__main__":
    main()
