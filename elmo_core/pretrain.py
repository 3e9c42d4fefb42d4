"""Train a biLM (Peters et al. 2018, §3.1; §3.4 for domain fine-tuning) and export it in the
original ``options.json`` + ``weights.hdf5`` format.

    python -m elmo_core.pretrain --preset small --train 'corpus/*.txt' --heldout heldout.txt --out DIR
    torchrun --nproc_per_node 4 -m elmo_core.pretrain ...            # data parallel (DDP)
    python -m elmo_core.pretrain --init-from MODEL_DIR --train task.txt --heldout task_dev.txt \
        --out DIR --epochs 1                                           # domain fine-tuning (§3.4)

Training follows the original code unless told otherwise: sentences packed into rows of
``unroll_steps`` tokens with LSTM states carried between batches (truncated BPTT), dropout 0.1,
Adagrad (lr 0.2, initial accumulator 1.0) on the loss times ``unroll_steps``, global-norm
clipping at 10. ``--batch-size`` is the global batch; with N workers each takes its rows.
The corpus files are interleaved in their proportions (``lm_data``; ``--stream-order files`` is
the original's one file at a time). Each update runs ``lm_fast_step`` (``--train-step plain``:
the autograd reference, same mathematics).

Everything needed to continue is in ``DIR/checkpoint.pt`` (weights, optimizer, epoch and batch
position, LSTM states, RNG states), written atomically every ``--checkpoint-every`` steps and
when ``--max-minutes`` runs out or the process is asked to stop (SIGTERM, Ctrl-C: after the update it
is in); rerunning the same command resumes exactly. At the end the
model (also when stopped by ``--max-minutes``) is exported to ``DIR/options.json``,
``DIR/weights.hdf5`` (with the softmax under ``softmax/*``, which other readers ignore) and
``DIR/vocab.txt``, and held-out perplexities are written to ``DIR/summary.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist

from suite_common.errors import ConfigError
from suite_common.hashing import content_sha256
from suite_common.progress import progress_bar

from .bilm import BiLM
from .options import parse_options
from .pretraining.lm_checkpoint import (
    CheckpointError,
    load_checkpoint,
    load_language_model,
    save_checkpoint,
    save_language_model,
)
from .pretraining.lm_command_line import PRESETS, build_parser
from .pretraining.lm_data import LMStream, Vocabulary, expand_files
from .pretraining.lm_fast_step import FastTrainingStep
from .pretraining.lm_prefetch import prefetched_batches
from .pretraining.lm_training import LanguageModel, detach_state, evaluate_perplexity, heldout_report, lm_optimizer


def parse_args(argv=None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def setup_distributed(device: str) -> tuple[int, int, str]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1, device
    backend = "nccl" if device.startswith("cuda") else "gloo"
    dist.init_process_group(backend)
    rank = dist.get_rank()
    if device.startswith("cuda"):
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}"
        torch.cuda.set_device(device)
    return rank, world, device


def build_model(args, files, rank: int, world: int) -> tuple[LanguageModel, Vocabulary, dict]:
    """Fresh model from a preset/options, or a previously exported one (``--init-from``)."""
    args.out.mkdir(parents=True, exist_ok=True)
    # --seed decides a fresh model's initialization and, for either kind of run, the dropout masks that
    # follow (a resumed run then restores its checkpoint's random state)
    torch.manual_seed(args.seed)
    if args.init_from:
        if args.lstm_dim or args.projection_dim:
            raise ValueError("--lstm-dim/--projection-dim make a new model; --init-from continues an existing one")
        lm, vocab, meta = load_language_model(
            args.init_from, dropout=args.dropout, allow_extra=getattr(args, "allow_extra_weights", False)
        )
        return lm, vocab, {"init_from": str(args.init_from), **meta}
    vocab_path = args.out / "vocab.txt"
    if rank == 0 and not vocab_path.exists():
        vocab = Vocabulary.load(args.vocab) if args.vocab else Vocabulary.build(files, args.min_count)
        vocab.save(vocab_path)
    if world > 1:  # every worker waits here unconditionally: deciding per worker would race
        dist.barrier()
    vocab = Vocabulary.load(vocab_path)
    options = json.loads(args.options.read_text()) if args.options else json.loads(json.dumps(PRESETS[args.preset]))
    for key, value in (("dim", args.lstm_dim), ("projection_dim", args.projection_dim)):
        if value is not None:
            options.setdefault("lstm", {})[key] = value
    bilm = BiLM(parse_options(options, str(args.options or f"preset {args.preset}")))
    return LanguageModel(bilm, len(vocab), dropout=args.dropout), vocab, {}


def make_training_step(lm: LanguageModel, kind: str, world: int):
    """``step(batch, state, scale, rows, device)`` -> (NLL per direction, state), leaving in
    ``.grad`` the gradient of ``scale`` times the global batch's summed NLL (all workers)."""
    if kind == "fast":
        fast = FastTrainingStep(lm)

        def step(batch, state, scale, rows, device):
            nll, final = fast(batch, state, scale, rows, device)
            if world > 1:  # each worker has its rows' share: the sum is the global gradient
                for p in lm.parameters():
                    dist.all_reduce(p.grad)
            return nll, final

        return step
    model = torch.nn.parallel.DistributedDataParallel(lm, find_unused_parameters=True) if world > 1 else lm

    def plain_step(batch, state, scale, rows, device):
        nll, final = model(batch, state, rows, device)
        (nll.sum() * scale * world).backward()  # DDP averages over workers: times world = the sum
        return nll.detach(), final

    return plain_step


def train(args) -> dict:
    rank, world, device = setup_distributed(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.set_float32_matmul_precision(args.matmul_precision)
    if args.batch_size % world:
        raise ConfigError(f"--batch-size {args.batch_size} is not divisible by {world} workers")
    files = expand_files(args.train)
    lm, vocab, meta = build_model(args, files, rank, world)
    lm.to(device).train()
    optimizer = lm_optimizer(lm, args.lr, device)
    stream = LMStream(files, vocab, args.batch_size, args.unroll_steps, seed=args.seed, order=args.stream_order)
    rows = slice(rank * args.batch_size // world, (rank + 1) * args.batch_size // world)
    identity = training_identity(args, lm, vocab, files, meta)
    progress = {"epoch": 0, "batch_in_epoch": 0, "step": 0, "tokens": 0, "seconds": 0.0}
    state = lm.bilm.zero_state(args.batch_size, device)
    ckpt_path = args.out / "checkpoint.pt"
    if ckpt_path.exists():
        progress, state = load_checkpoint(ckpt_path, identity, lm, optimizer, rank, world, device)
        if rank == 0:
            print(f"resuming from {ckpt_path}: epoch {progress['epoch']}, step {progress['step']}", file=sys.stderr)
    if args.init_from and args.heldout and rank == 0 and not ckpt_path.exists():
        write_perplexity_before(lm, vocab, args, device)
    local_state = [(h[rows], c[rows]) for h, c in state]
    step = make_training_step(lm, args.train_step, world)

    log = open_train_log(args.out / "train_log.jsonl", progress["step"]) if rank == 0 else None
    started, base_seconds, ema = time.time(), progress["seconds"], None
    asked, restore_signals = stop_when_asked()
    stop = lambda: (
        (args.max_steps is not None and progress["step"] >= args.max_steps)
        or (args.max_minutes is not None and time.time() - started > 60 * args.max_minutes)
        or asked_anywhere(asked, world, device)
    )
    bar = progress_bar(desc="biLM", unit="tok", unit_scale=True, disable=args.no_progress or rank != 0, mininterval=2)
    while progress["epoch"] < args.epochs and not stop():
        workers = args.data_workers
        for batch in prefetched_batches(stream, progress["epoch"], progress["batch_in_epoch"], workers):
            count = int((batch.forward_targets >= 0).sum())  # the global batch's tokens
            optimizer.zero_grad(set_to_none=True)
            # the global mean loss, times unroll_steps as in the original
            nll, local_state = step(batch, local_state, args.unroll_steps / (2 * count), rows, device)
            torch.nn.utils.clip_grad_norm_(lm.parameters(), args.clip_norm)
            optimizer.step()
            local_state = detach_state(local_state)
            value = global_mean_loss(nll, count, world, device)
            progress["step"] += 1
            progress["batch_in_epoch"] += 1
            progress["tokens"] += count
            ema = value if ema is None else 0.98 * ema + 0.02 * value
            bar.update(count)
            bar.set_postfix(epoch=progress["epoch"], ppl=f"{math.exp(ema):.1f}", refresh=False)
            if log:
                elapsed = round(base_seconds + time.time() - started, 2)  # training time so far, resumed runs included
                line = {"step": progress["step"], "epoch": progress["epoch"], "loss": value, "seconds": elapsed}
                log.write(json.dumps(line) + "\n")
            if progress["step"] % args.checkpoint_every == 0 or stop():
                progress["seconds"] = base_seconds + time.time() - started
                save_checkpoint(ckpt_path, identity, lm, optimizer, progress, local_state, rank, world)
            if stop():
                break
        else:
            progress["epoch"] += 1
            progress["batch_in_epoch"] = 0
    bar.close()
    restore_signals()
    progress["seconds"] = base_seconds + time.time() - started
    save_checkpoint(ckpt_path, identity, lm, optimizer, progress, local_state, rank, world)
    if log:
        log.close()
    summary = {}
    if rank == 0:  # also on a time limit: the export says how far training got
        progress["finished"] = progress["epoch"] >= args.epochs or (
            args.max_steps is not None and progress["step"] >= args.max_steps
        )
        summary = export(lm, vocab, args, progress, device)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return summary


def stop_when_asked():
    """An event set by SIGTERM or SIGINT (Ctrl-C, a scheduler's stop): training then ends after the update
    it is in, checkpoints and exports, as when ``--max-minutes`` runs out; a second signal stops at once.
    Returns the event and a function that puts the previous handlers back. Outside the main thread (a test
    calling ``train``) no handler is installed."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return asked, lambda: None

    def ask(signum, frame):
        if asked.is_set():
            raise KeyboardInterrupt
        asked.set()
        print(f"stopping after this update ({signal.Signals(signum).name}); again to stop at once", file=sys.stderr)

    before = {sig: signal.signal(sig, ask) for sig in (signal.SIGTERM, signal.SIGINT)}
    return asked, lambda: [signal.signal(sig, handler) for sig, handler in before.items()]


def asked_anywhere(asked: threading.Event, world: int, device) -> bool:
    """Whether any worker was asked to stop (with several, they must all stop after the same update)."""
    if world == 1:
        return asked.is_set()
    flag = torch.tensor([float(asked.is_set())], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def global_mean_loss(nll: torch.Tensor, count: int, world: int, device) -> float:
    """The batch's mean loss per token and direction over all workers (``count``: the global batch's tokens)."""
    value = float(nll.sum()) / (2 * count)  # this worker's share of the global mean
    if world > 1:
        t = torch.tensor([value], device=device)
        dist.all_reduce(t)  # sum of the shares = the global mean loss
        value = float(t)
    return value


def training_identity(args, lm: LanguageModel, vocab: Vocabulary, files, meta: dict) -> dict:
    """What a checkpoint must match to be resumed: the model's options, the vocabulary and the stream."""
    return {
        "options": lm.bilm.opts.to_json_dict(),
        "vocab": vocab.digest(),
        "batch_size": args.batch_size,
        "unroll_steps": args.unroll_steps,
        "seed": args.seed,
        "train_sha256": [content_sha256(f) for f in files],  # the files by their content, not their paths
        "init_from": meta.get("init_from"),
        "stream_order": args.stream_order,
    }


def write_perplexity_before(lm: LanguageModel, vocab: Vocabulary, args, device) -> None:
    """Domain fine-tuning (§3.4, Table 7): the starting model's held-out perplexity, before any update."""
    heldout = LMStream(expand_files([args.heldout]), vocab, args.batch_size, args.unroll_steps, shuffle=False)
    ppl = evaluate_perplexity(lm, heldout, device=device)
    (args.out / "heldout_before.json").write_text(json.dumps(ppl.as_dict()) + "\n")
    print(f"held-out perplexity before training: {ppl.as_dict()}", file=sys.stderr)


def open_train_log(log_path: Path, step: int):
    """The per-update log, opened for appending; what an interrupted run logged past its last
    checkpoint (steps after ``step``) is dropped first. Line-buffered: a checkpoint never runs ahead of
    its log, whatever ends the process after it."""
    if log_path.exists():
        kept = [line for line in log_path.read_text().splitlines() if json.loads(line)["step"] <= step]
        log_path.write_text("".join(line + "\n" for line in kept))
    return open(log_path, "a", buffering=1)


def export(lm: LanguageModel, vocab: Vocabulary, args, progress: dict, device) -> dict:
    save_language_model(lm, vocab, args.out)
    summary = {
        "progress": progress,
        "batch_size": args.batch_size,
        "unroll_steps": args.unroll_steps,
        "lr": args.lr,
        "dropout": args.dropout,
        "vocab_size": len(vocab),
        "parameters_bilm": sum(p.numel() for p in lm.bilm.parameters()),
        "parameters_softmax": sum(p.numel() for p in lm.softmax.parameters()),
        "options": lm.bilm.opts.to_json_dict(),
    }
    summary["stream_order"] = args.stream_order
    if args.heldout:
        report = heldout_report(lm, vocab, [args.heldout], args.batch_size, args.unroll_steps, device)
        summary["heldout"] = str(args.heldout)
        summary["heldout_perplexity"] = report["stateful"]
        summary["heldout_perplexity_stateless"] = report["stateless"]
        if "by_source_stateful" in report:
            summary["heldout_perplexity_by_source"] = report["by_source_stateful"]
        if (args.out / "heldout_before.json").exists():
            summary["heldout_perplexity_before"] = json.loads((args.out / "heldout_before.json").read_text())
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: summary.get(k) for k in ("progress", "heldout_perplexity")}))
    return summary


def finetune(
    init_from: Path,
    train_text: Path,
    heldout_text: Path,
    out: Path,
    epochs: int = 1,
    seed: int = 0,
    device: str = "cpu",
) -> dict:
    """Domain fine-tuning (§3.4) as a function: continue the exported model in ``init_from`` on
    ``train_text`` for ``epochs`` and export it to ``out``; returns the summary (held-out
    perplexity of ``heldout_text`` before and after). Every other setting is the command's default."""
    parser = build_parser()
    args = argparse.Namespace(**{a.dest: a.default for a in parser._actions if a.dest != "help"})
    args.__dict__.update(
        init_from=Path(init_from),
        train=[str(train_text)],
        heldout=str(heldout_text),
        out=Path(out),
        epochs=epochs,
        seed=seed,
        device=device,
        no_progress=True,
    )
    return train(args)


def main(argv=None) -> None:
    args = parse_args(argv)
    try:
        train(args)
    except (CheckpointError, ValueError, OSError) as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
