"""Entailment's head beside allennlp-models' ``esim`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: the TSV for the suite; for AllenNLP's ``snli`` reader the same
pairs as JSON lines (``sentence1``, ``sentence2``, ``gold_label``), tokenized on both sides by the suite's
tokenizer. ``reference_config`` is the reference's AllenNLP configuration at the suite's paper-profile
settings (``tasks/common/conformance.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tasks.common import conformance as shared

TITLE = "SICK entailment"
REFERENCE_MODEL = "esim"  # its AllenNLP model type
PACKAGE = "allennlp_models.pair_classification"
METRIC = "accuracy"  # the reference's name of the dev metric


def prepare(out: Path, limit: int | None) -> dict:
    src = shared.SHARED_DATA / "nli_sick"
    paths = {}
    for split in ("train", "dev"):
        lines = (src / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        header, rows = lines[0], [r for r in lines[1:] if r.strip()]
        if split == "train" and limit:
            rows = rows[:limit]
        tsv = shared.write(out / f"{split}.tsv", "\n".join([header] + rows) + "\n")
        col = {name: i for i, name in enumerate(header.split("\t"))}
        jsonl = [
            json.dumps(
                {
                    "sentence1": c[col["sentence_A"]],
                    "sentence2": c[col["sentence_B"]],
                    "gold_label": c[col["entailment_label"]].lower(),
                }
            )
            for c in (r.split("\t") for r in rows)
        ]
        paths[split] = (tsv, shared.write(out / f"{split}.jsonl", "\n".join(jsonl) + "\n"))
    return {
        "suite": {"data.train_path": paths["train"][0], "data.dev_path": paths["dev"][0]},
        "reference": {"train": paths["train"][1], "dev": paths["dev"][1]},
        "notes": ["SICK train.tsv / dev.tsv; the reference reads the same pairs as SNLI-style JSON lines"],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    embedders = {"tokens": {"type": "embedding", "embedding_dim": 100, "trainable": True}}
    if elmo:
        embedders["elmo"] = shared.elmo_embedder(bilm, layer_norm=True, dropout=0.0)
    model = {
        "type": "esim",
        "dropout": 0.5,
        "text_field_embedder": {"token_embedders": embedders},
        "encoder": {
            "type": "lstm",
            "input_size": 100 + dim,
            "hidden_size": 300,
            "num_layers": 1,
            "bidirectional": True,
        },
        "matrix_attention": {"type": "dot_product"},
        "projection_feedforward": {"input_dim": 2400, "hidden_dims": 300, "num_layers": 1, "activations": "relu"},
        "inference_encoder": {
            "type": "lstm",
            "input_size": 300,
            "hidden_size": 300,
            "num_layers": 1,
            "bidirectional": True,
        },
        "output_feedforward": {
            "input_dim": 2400,
            "num_layers": 1,
            "hidden_dims": 300,
            "activations": "relu",
            "dropout": 0.5,
        },
        "output_logit": {"input_dim": 300, "num_layers": 1, "hidden_dims": 3, "activations": "linear"},
        "initializer": {
            "regexes": [
                [".*linear_layers.*weight", {"type": "xavier_uniform"}],
                [".*linear_layers.*bias", {"type": "zero"}],
                [".*weight_ih.*", {"type": "xavier_uniform"}],
                [".*weight_hh.*", {"type": "orthogonal"}],
                [".*bias_ih.*", {"type": "zero"}],
                [".*bias_hh.*", {"type": "lstm_hidden_bias"}],
            ]
        },
    }
    if elmo:
        model["regularizer"] = shared.regularizer(0.001)
    reader = {"type": "snli", "tokenizer": {"type": "suite_regex"}, "token_indexers": shared.indexers(elmo)}
    trainer = shared.trainer(
        epochs,
        {"type": "adam", "lr": 0.0004},
        "+accuracy",
        5.0,
        learning_rate_scheduler={"type": "reduce_on_plateau", "factor": 0.5, "mode": "max", "patience": 0},
    )
    config = shared.common(seed, data["train"], data["dev"], reader, model, trainer, 32)
    overrides = (["elmo.position=input"] if elmo else []) + ["trainer.weight_decay=0.0", "encoder.finetune=false"]
    matched = [
        "ELMo at the input only (allennlp's esim has no output ELMo)",
        "no weight decay (esim.jsonnet has none)",
        "the biLM as published, not fine-tuned on SICK (the reference reads a fixed biLM)",
        "gradient norm 5 (the suite's; esim.jsonnet: 10)",
        "tokens from the suite's tokenizer on both sides",
    ]
    return config, overrides, matched
