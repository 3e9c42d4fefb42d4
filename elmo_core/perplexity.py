"""Held-out perplexity of an exported biLM (Peters et al. 2018, §3.4 and Table 7), with the full
normalized softmax, for the forward and backward LMs and their average.

    python -m elmo_core.perplexity [--model DIR] --heldout heldout.txt [--stateless] [--batch-size 128]
    python -m elmo_core.perplexity --model DIR --heldout heldout.txt --by-source

``DIR`` holds ``options.json``, ``weights.hdf5`` (with ``softmax/*``) and ``vocab.txt``, as written by
``elmo_core.pretrain``. By default LSTM states are carried across batches, as in training;
``--stateless`` starts every batch from zero. ``--by-source``: stateful and stateless perplexity of
the whole file and of each source, when a ``stats.json`` beside the held-out file gives each
source's number of held-out sentences in file order (as ``../shared/data/lm_corpus`` and
``lm_corpus_large`` do); with several held-out files, each one is reported on its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from .pretraining.lm_checkpoint import CheckpointError, load_language_model
from .pretraining.lm_data import LMStream, Vocabulary, expand_files
from .pretraining.lm_training import evaluate_perplexity, fold_mask, heldout_report


def by_source(args, lm, vocab, fold) -> dict:
    """``--by-source``: the report of one held-out file, or ``{"by_file": ...}`` of each of several."""
    files = [str(f) for f in expand_files(args.heldout)]
    reports = {}
    for path in files:
        reports[path] = heldout_report(
            lm.to(args.device), vocab, [path], args.batch_size, args.unroll_steps, args.device, progress=True, fold=fold
        )
        if "by_source_missing" in reports[path]:
            print(f"note: {path}: no per-source perplexity: {reports[path]['by_source_missing']}", file=sys.stderr)
    return reports[files[0]] if len(files) == 1 else {"by_file": reports}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m elmo_core.perplexity", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--model", type=Path, help="exported model directory (default: the embedded biLM, elmo_core/pretrained/small)"
    )
    ap.add_argument("--heldout", nargs="+", required=True, help="text files or globs")
    ap.add_argument("--batch-size", type=int, default=128, help="sentence streams evaluated side by side")
    ap.add_argument(
        "--unroll-steps", type=int, default=20, help="tokens per stream and step (the truncated-BPTT window)"
    )
    ap.add_argument("--stateless", action="store_true", help="zero LSTM state for every batch")
    ap.add_argument(
        "--warmup-batches", type=int, default=0, help="stateful: warm the states on this many batches first"
    )
    ap.add_argument(
        "--by-source",
        action="store_true",
        help="also stateless, and per source (needs stats.json beside the held-out file); several files "
        "are reported one by one",
    )
    ap.add_argument(
        "--event-space",
        type=Path,
        metavar="VOCAB",
        help="score in the event space of another biLM's vocab.txt (a subset of this model's): a word it lacks "
        "counts as its <UNK>, with the summed probability of every such word, so the perplexity compares with "
        "that biLM's",
    )
    ap.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="cpu or cuda (default: cuda when available)",
    )
    args = ap.parse_args(argv)
    if args.model is None:
        from .pretrained import model_dir

        args.model = model_dir()
    try:
        print(f"loading {args.model} ...", file=sys.stderr, flush=True)
        lm, vocab, meta = load_language_model(args.model)
        if meta["softmax"] != "loaded":
            raise CheckpointError(f"{args.model}: no trained softmax, perplexity is undefined")
        fold = fold_mask(vocab, Vocabulary.load(args.event_space)).to(args.device) if args.event_space else None
        space = {"event_space": str(args.event_space)} if args.event_space else {}
        if args.by_source:
            print(
                json.dumps(
                    {"model": str(args.model), "heldout": args.heldout, **space, **by_source(args, lm, vocab, fold)}
                )
            )
            return
        stream = LMStream(expand_files(args.heldout), vocab, args.batch_size, args.unroll_steps, shuffle=False)
        ppl = evaluate_perplexity(
            lm.to(args.device),
            stream,
            stateful=not args.stateless,
            device=args.device,
            progress=True,
            warmup_batches=args.warmup_batches,
            fold=fold,
        )
    except (CheckpointError, ValueError, OSError) as e:
        raise SystemExit(f"error: {e}") from None
    print(
        json.dumps(
            {
                "model": str(args.model),
                "heldout": args.heldout,
                "stateful": not args.stateless,
                "warmup_batches": args.warmup_batches,
                **space,
                **ppl.as_dict(),
            }
        )
    )


if __name__ == "__main__":
    main()
