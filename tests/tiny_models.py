"""A tiny random BERT built from a config in a directory (nothing is downloaded): what users pass as
``encoder.model=DIR``, for the tests of every package."""

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
