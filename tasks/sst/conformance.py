"""SST-5's head beside allennlp-models' ``bcn`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: the tree files as they are (whole sentences on both sides).
``reference_config`` is the reference's AllenNLP configuration at the suite's paper-profile settings
(``tasks/common/conformance.py``).
"""

from __future__ import annotations

from pathlib import Path

from tasks.common import conformance as shared

TITLE = "SST-5"
REFERENCE_MODEL = "bcn"  # its AllenNLP model type
PACKAGE = "allennlp_models.classification"
METRIC = "accuracy"  # the reference's name of the dev metric


def prepare(out: Path, limit: int | None) -> dict:
    src = shared.SHARED_DATA / "sst"
    lines = (src / "train.txt").read_text(encoding="utf-8").splitlines()
    train = shared.write(out / "train.txt", "\n".join(lines[:limit] if limit else lines) + "\n")
    return {
        "suite": {"data.train_path": train, "data.dev_path": src / "dev.txt"},
        "reference": {"train": train, "dev": src / "dev.txt"},
        "notes": [
            f"{f'the first {limit}' if limit else 'all'} training trees, read as whole sentences or, in the "
            "phrases variant, as every phrase (subtree) on both sides; dev: whole sentences"
        ],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    model = {
        "type": "bcn",
        "embedding_dropout": 0.5,
        "text_field_embedder": {
            "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 100, "trainable": True}}
        },
        "pre_encode_feedforward": {
            "input_dim": 100 + dim,
            "num_layers": 1,
            "hidden_dims": [300],
            "activations": ["relu"],
            "dropout": [0.25],
        },
        "encoder": {"type": "lstm", "input_size": 300, "hidden_size": 300, "num_layers": 1, "bidirectional": True},
        "integrator": {"type": "lstm", "input_size": 1800, "hidden_size": 300, "num_layers": 1, "bidirectional": True},
        "integrator_dropout": 0.1,
        "output_layer": {
            "input_dim": 4 * (600 + dim),
            "num_layers": 3,
            "output_dims": [1200, 600, 5],
            "pool_sizes": 4,
            "dropout": [0.2, 0.3, 0.0],
        },
    }
    if elmo:
        model.update(
            elmo={
                "options_file": str(bilm["options"]),
                "weight_file": str(bilm["weights"]),
                "do_layer_norm": False,
                "dropout": 0.0,
                "num_output_representations": 2,
            },
            use_input_elmo=True,
            use_integrator_output_elmo=True,
            regularizer=shared.regularizer(0.001),
        )
    reader = {
        "type": "sst_tokens",
        "use_subtrees": False,
        "granularity": "5-class",
        "token_indexers": shared.indexers(elmo),
    }
    config = shared.common(
        seed,
        data["train"],
        data["dev"],
        reader,
        model,
        shared.trainer(epochs, {"type": "adam", "lr": 0.0001}, "+accuracy", 5.0),
        32,
    )
    # dev is whole sentences, however training is read (dataset_reader.use_subtrees=true: every phrase)
    config["validation_dataset_reader"] = {**reader, "use_subtrees": False}
    overrides = ["task.phrases_min_tokens=null"]
    matched = [
        "whole sentences in training unless overridden (the phrases variant: every phrase on both sides, "
        "dataset_reader.use_subtrees=true and task.phrases_min_tokens=1); dev: whole sentences",
        "word embeddings 100-d trainable (no GloVe)",
        "the BCN's own layers as published; the suite's "
        "model is the paper's simplified BCN (BiLSTM, max and mean pooling, two-layer feed-forward)",
    ]
    return config, overrides, matched
