"""Tiny models for the tests of every package (nothing is downloaded): a random BERT saved in a directory, what
users pass as ``encoder.model=DIR`` (``tiny_bert``), a tiny BERT pretraining run (``corpus_files``,
``tiny_args``), and a tiny biLM that can be fine-tuned (``finetunable_bilm``)."""

import random
from pathlib import Path

import torch

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "sat",
    "un",
    "##believ",
    "##able",
    "on",
    "mat",
    "a",
    "dog",
    ".",
    ",",
    "big",
    "red",
]


def tiny_bert(directory, max_position=64, layers=2, seed=0):
    """A random BertModel + WordPiece tokenizer saved with ``save_pretrained`` (what users pass)."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(directory / "vocab.txt"), do_lower_case=False)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=max_position,
    )
    BertModel(config).eval().save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


WORDS = "the a cat dog sat ran on under mat house red blue big small one two three".split()


def corpus_files(root: Path, n_files: int = 3, n_sentences: int = 120, seed: int = 0) -> list[Path]:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in range(n_files):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + " ." for _ in range(n_sentences)]
        paths.append(root / f"source{f}.txt")
        paths[-1].write_text("\n".join(lines) + "\n")
    return paths


def tiny_args(tmp_path: Path, out: str, **extra) -> list[str]:
    files = corpus_files(tmp_path / "corpus")
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join(Path(f).read_text().splitlines()[-20] for f in files) * 10 + "\n")
    argv = [
        "--train",
        str(tmp_path / "corpus" / "*.txt"),
        "--heldout",
        str(heldout),
        "--out",
        str(tmp_path / out),
        "--vocab-size",
        "120",
        "--hidden",
        "16",
        "--layers",
        "2",
        "--heads",
        "2",
        "--intermediate",
        "32",
        "--max-length",
        "24",
        "--batch-size",
        "4",
        "--warmup-steps",
        "2",
        "--max-steps",
        "6",
        "--checkpoint-every",
        "100",
        "--threads",
        "1",
        "--no-progress",
        "--device",
        "cpu",
    ]
    for key, value in extra.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


def finetunable_bilm(out: Path) -> tuple[Path, Path]:
    """A tiny biLM trained one epoch on the bilm-tf fixture corpus by ``elmo_core.pretrain``, so that it has
    what ``encoder.finetune=true`` needs (its vocabulary and softmax): ``(options.json, weights.hdf5)``."""
    from conftest import shared_path

    from elmo_core.pretrain import main as pretrain_main

    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    args = ["--preset", "tiny", "--train", str(corpus), "--out", str(out), "--batch-size", "4"]
    pretrain_main([*args, "--unroll-steps", "5", "--min-count", "1", "--epochs", "1", "--no-progress"])
    return out / "options.json", out / "weights.hdf5"
