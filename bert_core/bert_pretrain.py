"""Pretrain a small BERT (Devlin et al. 2019 §3.1: masked LM + next-sentence prediction) on the
corpus the embedded biLM was trained on, for an equal-data comparison with ELMo.

    python -m bert_core.bert_pretrain --train '../shared/data/lm_corpus/train/*.txt' \\
        --heldout ../shared/data/lm_corpus/heldout.txt --out checkpoints/bert-small --max-minutes 90

1. A cased WordPiece vocabulary is trained on the training files with ``tokenizers`` (or reused
   from ``--tokenizer``), saved with the model as a ``transformers`` fast tokenizer.
2. ``transformers``' ``BertForPreTraining`` is trained on the streamed MLM + NSP instances
   (``bert_core.pretraining_data``); masking is ``DataCollatorForLanguageModeling``'s (15 %,
   80/10/10), drawing from a generator whose state the checkpoint holds (``SeededMasking``). AdamW
   with linear warm-up and linear decay to zero at ``--max-steps``.
3. ``checkpoint.pt`` (weights, optimizer, schedule, position, the masking and dropout generators'
   states) is written atomically every ``--checkpoint-every`` updates and when ``--max-minutes``
   is up; rerunning the same command resumes exactly where it stopped.
4. At the end (or for any saved model with ``--evaluate MODEL_DIR --heldout FILE``): held-out MLM
   accuracy (masked pieces predicted exactly), MLM loss and NSP accuracy,
   overall and per source, and the model in ``<out>/model`` (``save_pretrained``), loadable by
   ``AutoModel``/``AutoTokenizer`` and by the suite's ``encoder=transformer``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

from elmo_core.pretraining.lm_data import CorpusIndex, expand_files, heldout_sources, read_sentences
from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import ConfigError, SuiteError, WeightsError
from suite_common.hashing import content_sha256

from .pretraining_data import FileDocument, ListDocument, PairStream, batches, encode_pair
from .wordpiece import load_tokenizer, piece_ids, prepare_tokenizer

FORMAT = "elmo-suite/bert-checkpoint/1"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bert_core.bert_pretrain",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--train", nargs="+", help="training text files or globs (one sentence per line)")
    ap.add_argument(
        "--evaluate",
        type=Path,
        metavar="MODEL_DIR",
        help="only score a saved BertForPreTraining model on --heldout (MLM and NSP accuracy) and exit",
    )
    ap.add_argument("--heldout", help="held-out text: MLM and NSP accuracy (per source with a stats.json beside it)")
    ap.add_argument("--out", type=Path, help="run directory (checkpoint.pt, model/, summary.json)")
    ap.add_argument("--tokenizer", type=Path, help="an existing tokenizer directory (default: train WordPiece)")
    ap.add_argument("--vocab-size", type=int, default=8192, help="WordPiece vocabulary size to train")
    ap.add_argument("--hidden", type=int, default=256, help="hidden size")
    ap.add_argument("--layers", type=int, default=4, help="Transformer layers")
    ap.add_argument("--heads", type=int, default=4, help="attention heads")
    ap.add_argument("--intermediate", type=int, default=1024, help="feed-forward size")
    ap.add_argument("--max-length", type=int, default=128, help="pieces per instance, [CLS] and [SEP]s included")
    ap.add_argument("--batch-size", type=int, default=32, help="instances per update")
    ap.add_argument("--lr", type=float, default=5e-4, help="peak learning rate (AdamW)")
    ap.add_argument("--warmup-steps", type=int, default=200, help="linear warm-up updates")
    ap.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay")
    ap.add_argument(
        "--max-steps", type=int, help="updates of the schedule (the learning rate reaches zero there; training stops)"
    )
    ap.add_argument("--max-minutes", type=float, help="checkpoint and stop after this long; rerun to resume")
    ap.add_argument("--seed", type=int, default=0, help="seed of the pair order, the masking and the weights")
    ap.add_argument("--checkpoint-every", type=int, default=200, help="updates between checkpoints")
    ap.add_argument("--eval-batches", type=int, default=0, help="held-out batches to score (0: all)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="torch device")
    ap.add_argument("--threads", type=int, help="torch CPU threads")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (log lines only)")
    return ap


class SeededMasking:
    """``DataCollatorForLanguageModeling`` (15 %, 80/10/10) drawing from a generator this class owns.

    The collator is built without a seed, so it draws from torch's global generator (its documented
    behaviour); each call swaps this object's state in and out with ``torch.random.fork_rng``. The
    state is plain bytes (``state``), saved in the checkpoint and restored on resume, so resuming
    does not depend on how a ``transformers`` release manages the collator's own generator (5.24
    re-seeds a seeded collator on its first call in each process, which lost a restored state).
    The draws equal those of ``torch.Generator().manual_seed(seed)``: same Mersenne Twister.
    """

    def __init__(self, tokenizer, seed: int):
        from transformers import DataCollatorForLanguageModeling

        self.collator = DataCollatorForLanguageModeling(
            tokenizer, mlm_probability=0.15, mask_replace_prob=0.8, random_replace_prob=0.1, seed=None
        )
        self.tokenizer = tokenizer
        self.state = torch.Generator().manual_seed(seed).get_state()

    def __call__(self, examples):
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(self.state)
            batch = self.collator(examples)
            self.state = torch.get_rng_state()
        return batch


def evaluate(model, tokenizer, heldout: Path, args, device) -> dict:
    """MLM accuracy and loss over the masked pieces, NSP accuracy; per source when known."""
    sources = heldout_sources(heldout) or {"heldout": read_sentences(heldout)}
    documents = {name: ListDocument(s) for name, s in sources.items()}
    stream = PairStream(list(documents.values()), piece_ids(tokenizer), args.max_length, seed=12345)
    names = list(documents)
    counts = {name: {"masked": 0, "correct": 0, "loss": 0.0, "pairs": 0, "nsp_correct": 0} for name in names}
    collator = SeededMasking(tokenizer, seed=12345)
    model.eval()
    with torch.inference_mode():
        instances = list(stream.instances())
        if args.eval_batches:
            instances = instances[: args.eval_batches * args.batch_size]
        for start in range(0, len(instances), args.batch_size):
            chunk = instances[start : start + args.batch_size]
            batch = collator([encode_pair(i, tokenizer.cls_token_id, tokenizer.sep_token_id) for i in chunk])
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(
                input_ids=batch["input_ids"],
                attention_mask=batch["attention_mask"],
                token_type_ids=batch["token_type_ids"],
            )
            labels = batch["labels"]
            nll = torch.nn.functional.cross_entropy(
                out.prediction_logits.transpose(1, 2), labels, ignore_index=-100, reduction="none"
            )
            correct = (out.prediction_logits.argmax(-1) == labels) & (labels != -100)
            nsp = out.seq_relationship_logits.argmax(-1) == batch["next_sentence_label"]
            for row in range(labels.shape[0]):
                c = counts[names[chunk[row].document]]
                c["masked"] += int((labels[row] != -100).sum())
                c["correct"] += int(correct[row].sum())
                c["loss"] += float(nll[row].sum())
                c["pairs"] += 1
                c["nsp_correct"] += int(nsp[row])
    model.train()

    def summary(c):
        return {
            "mlm_accuracy": 100 * c["correct"] / max(c["masked"], 1),
            "mlm_loss": c["loss"] / max(c["masked"], 1),
            "nsp_accuracy": 100 * c["nsp_correct"] / max(c["pairs"], 1),
            "masked_pieces": c["masked"],
            "pairs": c["pairs"],
        }

    total = {key: sum(c[key] for c in counts.values()) for key in ("masked", "correct", "loss", "pairs", "nsp_correct")}
    return {"overall": summary(total), "by_source": {n: summary(c) for n, c in counts.items()}}


def identity_of(args, files: list[Path]) -> dict:
    """What a checkpoint was made for; resuming with anything else is refused."""
    keys = (
        "vocab_size",
        "hidden",
        "layers",
        "heads",
        "intermediate",
        "max_length",
        "batch_size",
        "lr",
        "warmup_steps",
        "weight_decay",
        "max_steps",
        "seed",
    )
    return {
        "args": {k: getattr(args, k) for k in keys},
        "files_sha256": [content_sha256(f) for f in files],  # the files by their content, not their names
        "tokenizer": str(args.tokenizer) if args.tokenizer else None,
    }


def restore(ckpt: Path, identity: dict, model, optimizer, schedule, collator: SeededMasking) -> dict:
    """Resume from ``ckpt`` (tensors and plain data only: loading never runs code), refused unless it
    was made for ``identity``; returns the saved progress."""
    try:
        saved = torch.load(ckpt, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the same error to the user
        raise WeightsError(f"{ckpt}: unreadable checkpoint ({type(e).__name__}: {e})") from None
    if saved.get("format") != FORMAT or saved.get("identity") != identity:
        raise WeightsError(f"{ckpt} was made for other settings or data; use another --out or delete it")
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    schedule.load_state_dict(saved["schedule"])
    collator.state = saved["masking_rng"]
    torch.set_rng_state(saved["rng"])
    progress = saved["progress"]
    print(f"resuming from {ckpt}: update {progress['step']}, epoch {progress['epoch']}", flush=True)
    return progress


def save_model(model, tokenizer, config, args, identity: dict, files, losses: list, progress: dict, device) -> dict:
    """The finished model and tokenizer (``save_pretrained``) and ``summary.json``, with the held-out
    evaluation when ``--heldout`` is given."""
    out: Path = args.out
    model.save_pretrained(str(out / "model"))
    tokenizer.save_pretrained(str(out / "model"))
    summary = {
        "progress": progress,
        "config": config.to_dict(),
        "args": identity["args"],
        "files": [str(f) for f in files],
        "train_loss_last_100": sum(losses[-100:]) / max(len(losses[-100:]), 1),
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "device": str(device),
    }
    if args.heldout:
        summary["heldout"] = evaluate(model, tokenizer, Path(args.heldout), args, device)
        o = summary["heldout"]["overall"]
        print(
            f"held-out: MLM accuracy {o['mlm_accuracy']:.2f} (loss {o['mlm_loss']:.3f}), "
            f"NSP accuracy {o['nsp_accuracy']:.2f}"
        )
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"model -> {out / 'model'}")
    return summary


def build_model(args, tokenizer, device):
    """A new BERT of ``args``' size (``BertForPreTraining``: MLM and NSP heads), AdamW without weight
    decay on biases and LayerNorm weights, and the linear warm-up and decay schedule."""
    from transformers import BertConfig, BertForPreTraining, get_linear_schedule_with_warmup

    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=args.intermediate,
        max_position_embeddings=args.max_length,
        type_vocab_size=2,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = BertForPreTraining(config).to(device)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
            "weight_decay": args.weight_decay,
        },
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-6)
    schedule = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)
    return config, model, optimizer, schedule


def save_checkpoint(ckpt: Path, identity: dict, model, optimizer, schedule, collator: SeededMasking, progress: dict):
    torch_save_atomic(
        {
            "format": FORMAT,
            "identity": identity,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "masking_rng": collator.state,
            "rng": torch.get_rng_state(),
            "progress": dict(progress),
        },
        ckpt,
    )


def train(args) -> dict:
    if args.threads:
        torch.set_num_threads(args.threads)
    files = expand_files(args.train)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = prepare_tokenizer(args, files, out / "model")
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    config, model, optimizer, schedule = build_model(args, tokenizer, device)
    collator = SeededMasking(tokenizer, args.seed)
    progress = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "pieces": 0, "seconds": 0.0, "finished": False}
    identity, ckpt = identity_of(args, files), out / "checkpoint.pt"
    if ckpt.exists():
        progress = restore(ckpt, identity, model, optimizer, schedule, collator)
    index = CorpusIndex(files)
    documents = [FileDocument(f, index) for f in files]
    stream = PairStream(documents, piece_ids(tokenizer), args.max_length, seed=args.seed)

    def checkpoint():
        save_checkpoint(ckpt, identity, model, optimizer, schedule, collator, progress)

    started, session_start = time.monotonic(), progress["seconds"]
    bar = tqdm(total=args.max_steps, initial=progress["step"], unit="upd", disable=args.no_progress, dynamic_ncols=True)
    losses = []
    model.train()
    stopped_for_time = False
    while progress["step"] < args.max_steps and not stopped_for_time:
        for batch in batches(stream, collator, args.batch_size, progress["epoch"], progress["batch_in_epoch"]):
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
            progress["step"] += 1
            progress["batch_in_epoch"] += 1
            progress["pieces"] += int(batch["attention_mask"].sum())
            progress["seconds"] = session_start + time.monotonic() - started
            bar.update(1)
            bar.set_postfix(loss=f"{sum(losses[-50:]) / len(losses[-50:]):.3f}")
            if args.no_progress and progress["step"] % 100 == 0:
                print(
                    f"update {progress['step']}: loss {sum(losses[-100:]) / len(losses[-100:]):.4f}, "
                    f"{progress['pieces']} pieces, {progress['seconds'] / 60:.1f} min",
                    flush=True,
                )
            if progress["step"] >= args.max_steps:
                break
            if progress["step"] % args.checkpoint_every == 0:
                checkpoint()
            if args.max_minutes and (time.monotonic() - started) / 60 >= args.max_minutes:
                stopped_for_time = True
                break
        else:
            progress["epoch"] += 1
            progress["batch_in_epoch"] = 0
    bar.close()
    progress["finished"] = progress["step"] >= args.max_steps
    checkpoint()
    if not progress["finished"]:
        print(f"stopped after {args.max_minutes} min at update {progress['step']}; rerun the same command to resume")
        return {"progress": progress, "losses": losses}
    summary = save_model(model, tokenizer, config, args, identity, files, losses, progress, device)
    return {"progress": progress, "losses": losses, "summary": summary}


def evaluate_saved(args) -> dict:
    """``--evaluate MODEL_DIR``: held-out MLM and NSP accuracy of a saved model (ours or a public BERT)."""
    from transformers import BertForPreTraining

    if not args.heldout:
        raise ConfigError("--evaluate needs --heldout FILE")
    if args.threads:
        torch.set_num_threads(args.threads)
    tokenizer = load_tokenizer(args.evaluate)
    try:
        model = BertForPreTraining.from_pretrained(str(args.evaluate)).to(args.device)
    except (OSError, ValueError) as e:
        raise WeightsError(f"{args.evaluate}: not a BertForPreTraining model ({type(e).__name__})") from None
    args.max_length = min(args.max_length, model.config.max_position_embeddings)
    result = evaluate(model, tokenizer, Path(args.heldout), args, torch.device(args.device))
    print(json.dumps(result, indent=2))
    return result


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    try:
        if args.evaluate:
            evaluate_saved(args)
            return
        missing = [
            flag
            for flag, value in (("--train", args.train), ("--out", args.out), ("--max-steps", args.max_steps))
            if not value
        ]
        if missing:
            raise ConfigError(f"training needs {', '.join(missing)} (or --evaluate MODEL_DIR)")
        train(args)
    except SuiteError as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main()
