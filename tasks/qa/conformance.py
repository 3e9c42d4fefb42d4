"""SQuAD's head beside allennlp-models' ``bidaf`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: the first ``limit`` articles of the local ``train.json``; dev as
it is. ``reference_config`` is the reference's AllenNLP configuration at the suite's paper-profile settings
(``tasks/common/conformance.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tasks.common import conformance as shared

TITLE = "SQuAD (local split)"
REFERENCE_MODEL = "bidaf"  # its AllenNLP model type
PACKAGE = "allennlp_models.rc"
METRIC = "f1"  # the reference's name of the dev metric


def prepare(out: Path, limit: int | None) -> dict:
    src = shared.SHARED_DATA / "squad"
    data = json.loads((src / "train.json").read_text(encoding="utf-8"))
    if limit:
        data["data"] = data["data"][:limit]
    train = shared.write(out / "train.json", json.dumps(data))
    questions = sum(len(p["qas"]) for a in data["data"] for p in a["paragraphs"])
    return {
        "suite": {"data.train_path": train, "data.dev_path": src / "dev.json"},
        "reference": {"train": train, "dev": src / "dev.json"},
        "notes": [f"train: the first {len(data['data'])} articles of the local train.json ({questions} questions)"],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    embedders = {
        "tokens": {"type": "embedding", "embedding_dim": 100, "trainable": True},
        "token_characters": {
            "type": "character_encoding",
            "embedding": {"embedding_dim": 20},
            "encoder": {"type": "cnn", "embedding_dim": 20, "num_filters": 100, "ngram_filter_sizes": [5]},
            "dropout": 0.2,
        },
    }
    if elmo:
        embedders["elmo"] = shared.elmo_embedder(bilm, layer_norm=False, dropout=0.5)
    model = {
        "type": "bidaf",
        "dropout": 0.2,
        "text_field_embedder": {"token_embedders": embedders},
        "num_highway_layers": 2,
        "phrase_layer": {
            "type": "lstm",
            "bidirectional": True,
            "input_size": 200 + dim,
            "hidden_size": 90,
            "num_layers": 1,
        },
        "matrix_attention": {"type": "linear", "combination": "x,y,x*y", "tensor_1_dim": 180, "tensor_2_dim": 180},
        "modeling_layer": {
            "type": "lstm",
            "bidirectional": True,
            "input_size": 720,
            "hidden_size": 90,
            "num_layers": 2,
            "dropout": 0.2,
        },
        "span_end_encoder": {
            "type": "lstm",
            "bidirectional": True,
            "input_size": 1260,
            "hidden_size": 90,
            "num_layers": 1,
        },
    }
    reader = {
        "type": "squad",
        "tokenizer": {"type": "suite_regex"},
        "token_indexers": shared.indexers(elmo, chars=True, min_char_padding=5),
    }
    trainer = shared.trainer(
        epochs,
        {"type": "adadelta", "lr": 1.0, "rho": 0.95},
        "+f1",
        None,
        moving_average={"type": "exponential", "decay": 0.999},
    )
    config = shared.common(seed, data["train"], data["dev"], reader, model, trainer, 45)
    overrides = ["encoder.finetune=false", "task.batching=token_capped"]
    matched = [
        "the biLM as published, not fine-tuned on SQuAD",
        "Adadelta 1.0 (ρ 0.95), 45 questions a batch, "
        "weight average 0.999, sizes 90 (the suite's paper profile) on the reference's BiDAF",
        "tokens from the suite's tokenizer on both sides",
        "the suite's model is document-qa's BiDAF with "
        "self-attention and GRUs; allennlp-models has no such model, so this row compares two architectures",
    ]
    return config, overrides, matched
