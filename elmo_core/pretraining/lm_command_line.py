"""The command line of ``python -m elmo_core.pretrain`` (Peters et al. 2018, §3.1; §3.4 for
``--init-from``): its arguments, and the model-size presets (``small``: the suite's biLM; ``paper``:
the paper's 4096 cells projected to 512, seven character filters and two highway layers)."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from .lm_data import STREAM_ORDERS

_LSTM = {"cell_clip": 3, "proj_clip": 3, "use_skip_connections": True, "n_layers": 2}
_CNN = {"n_characters": 261, "max_characters_per_token": 50, "activation": "relu"}
PRESETS = {
    "tiny": {
        "lstm": {**_LSTM, "dim": 32, "projection_dim": 8},
        "char_cnn": {**_CNN, "embedding": {"dim": 4}, "filters": [[1, 4], [2, 8], [3, 8]], "n_highway": 1},
    },
    "small": {
        "lstm": {**_LSTM, "dim": 512, "projection_dim": 128},
        "char_cnn": {
            **_CNN,
            "embedding": {"dim": 16},
            "n_highway": 1,
            "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256]],
        },
    },
    "paper": {
        "lstm": {**_LSTM, "dim": 4096, "projection_dim": 512},
        "char_cnn": {
            **_CNN,
            "embedding": {"dim": 16},
            "n_highway": 2,
            "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
        },
    },
}


DESCRIPTION = (
    "Train a biLM (Peters et al. 2018, §3.1; §3.4 for domain fine-tuning) and export it in the\n"
    "original ``options.json`` + ``weights.hdf5`` format."
)


def build_parser(description: str = DESCRIPTION) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m elmo_core.pretrain",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--train", nargs="+", required=True, help="training text files or globs")
    ap.add_argument("--heldout", help="held-out text for perplexity (full softmax)")
    ap.add_argument("--out", required=True, type=Path, help="run directory (checkpoint, exported model)")
    add_model_arguments(ap)
    ap.add_argument("--vocab", type=Path, help="vocabulary file (default: built from --train)")
    ap.add_argument(
        "--stream-order",
        choices=STREAM_ORDERS,
        default="interleaved",
        help="interleaved: the files mixed in their corpus proportions (default); "
        "files: one file after the other, as the original code reads its shards",
    )
    ap.add_argument(
        "--min-count",
        type=int,
        default=3,
        help="words seen fewer times in --train are <UNK> in the vocabulary built from it",
    )
    ap.add_argument("--batch-size", type=int, default=128, help="global batch (rows)")
    ap.add_argument(
        "--unroll-steps",
        type=int,
        default=20,
        help="tokens per stream and update (truncated backpropagation through time)",
    )
    ap.add_argument("--epochs", type=int, default=10, help="passes over the training text")
    ap.add_argument("--max-steps", type=int, help="stop (exported) after this many updates")
    ap.add_argument("--max-minutes", type=float, help="checkpoint and stop after this long; rerun to resume")
    ap.add_argument("--lr", type=float, default=0.2, help="Adagrad learning rate (the original: 0.2)")
    ap.add_argument("--clip-norm", type=float, default=10.0, help="global gradient-norm clipping")
    ap.add_argument("--dropout", type=float, default=0.1, help="dropout in the biLM while training")
    ap.add_argument("--seed", type=int, default=0, help="seed of initialisation, stream order and dropout")
    ap.add_argument("--checkpoint-every", type=int, default=500, help="updates between checkpoints")
    ap.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="cpu or cuda (default: cuda when available)",
    )
    ap.add_argument("--threads", type=int, help="torch CPU threads")
    ap.add_argument(
        "--data-workers",
        type=int,
        default=0,
        help="processes assembling batches ahead of the training step, same batches in the same order "
        "(default 0: the main process; on a GPU the assembly is slower than the step, use 4 or more)",
    )
    ap.add_argument(
        "--matmul-precision",
        choices=("highest", "high"),
        default="highest",
        help="float32 matrix products: highest (default, exact float32) or high (TF32 on NVIDIA GPUs, "
        "about 3 decimal digits less in each product, several times faster there; no effect on CPUs)",
    )
    ap.add_argument(
        "--train-step",
        choices=("fast", "plain"),
        default="fast",
        help="fast (default): fused LSTM and softmax head, directions side by side on CPU; "
        "plain: autograd step by step (the reference; same mathematics)",
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (logs only)")
    return ap


def add_model_arguments(ap: argparse.ArgumentParser) -> None:
    """Which biLM trains: a new one (a preset, or an options.json, with sizes overridden) or an exported one."""
    src = ap.add_mutually_exclusive_group()
    src.add_argument(
        "--preset", choices=sorted(PRESETS), default="small", help="model size of a new biLM (default: small)"
    )
    src.add_argument("--options", type=Path, help="options.json of a new model (instead of a preset)")
    src.add_argument("--init-from", type=Path, help="exported model directory to continue (fine-tuning)")
    ap.add_argument(
        "--allow-extra-weights",
        action="store_true",
        help="with --init-from: ignore datasets in weights.hdf5 that its options.json does not use "
        "(default: an error, as they usually mean options and weights do not match)",
    )
    ap.add_argument("--lstm-dim", type=int, help="LSTM cells per layer (overrides the preset's lstm.dim)")
    ap.add_argument("--projection-dim", type=int, help="LSTM projection and token size (overrides lstm.projection_dim)")
