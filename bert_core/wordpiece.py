"""The WordPiece vocabulary of the small BERT (Devlin et al. 2019 §3.1: BERT's cased WordPiece,
trained with ``tokenizers`` and saved as a ``transformers`` fast tokenizer)."""

from __future__ import annotations

from pathlib import Path

from suite_common.errors import WeightsError

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece(files: list[Path], vocab_size: int, out: Path):
    """A cased WordPiece vocabulary (BERT's normalizer and pre-tokenizer), saved as a fast tokenizer."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    wordpiece = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
    wordpiece.train(
        [str(f) for f in files], vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL, show_progress=False
    )
    out.mkdir(parents=True, exist_ok=True)
    wordpiece.save_model(str(out))
    tokenizer = BertTokenizerFast(vocab=str(out / "vocab.txt"), do_lower_case=False, strip_accents=False)
    tokenizer.save_pretrained(str(out))
    return tokenizer


def load_tokenizer(path: Path):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(path))
    except (OSError, ValueError) as e:
        raise WeightsError(f"{path}: not a tokenizer directory ({e})") from None


def piece_ids(tokenizer):
    backend = tokenizer.backend_tokenizer
    return lambda words: backend.encode(words, is_pretokenized=True, add_special_tokens=False).ids


def prepare_tokenizer(args, files: list[Path], tokenizer_dir: Path):
    """The WordPiece tokenizer: ``--tokenizer`` (saved beside the model), the one an interrupted run
    saved, or a new one trained on the corpus."""
    if args.tokenizer:
        tokenizer = load_tokenizer(args.tokenizer)
        tokenizer.save_pretrained(str(tokenizer_dir))
        return tokenizer
    if (tokenizer_dir / "tokenizer.json").exists():
        return load_tokenizer(tokenizer_dir)
    print(f"training a WordPiece vocabulary of {args.vocab_size} on {len(files)} files", flush=True)
    return train_wordpiece(files, args.vocab_size, tokenizer_dir)
