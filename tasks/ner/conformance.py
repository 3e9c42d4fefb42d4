"""NER's head beside allennlp-models' ``crf_tagger`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: the first ``limit`` sentences of CoNLL-2003 ``eng.train``
(original 4 columns, both sides). ``reference_config`` is the reference's AllenNLP configuration at the
suite's paper-profile settings (``tasks/common/conformance.py``).
"""

from __future__ import annotations

from pathlib import Path

from tasks.common import conformance as shared

TITLE = "NER (CoNLL-2003)"
REFERENCE_MODEL = "crf_tagger"  # its AllenNLP model type
PACKAGE = "allennlp_models.tagging"
METRIC = "f1-measure-overall"  # the reference's name of the dev metric


def prepare(out: Path, limit: int | None) -> dict:
    src = shared.SHARED_DATA / "conll2003"
    blocks, current = [], []
    for line in (src / "eng.train").read_text(encoding="utf-8").splitlines():
        if line.startswith("-DOCSTART-"):
            continue
        if line.strip():
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    kept = blocks[:limit] if limit else blocks
    train = shared.write(out / "eng.train", "\n\n".join("\n".join(b) for b in kept) + "\n")
    dev = src / "eng.testa"
    return {
        "suite": {"data.train_path": train, "data.dev_path": dev},
        "reference": {"train": train, "dev": dev},
        "notes": [f"train: the first {len(kept)} sentences of eng.train; dev: eng.testa"],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    embedders = {
        "tokens": {"type": "embedding", "embedding_dim": 50, "trainable": True},
        "token_characters": {
            "type": "character_encoding",
            "embedding": {"embedding_dim": 16},
            "encoder": {
                "type": "cnn",
                "embedding_dim": 16,
                "num_filters": 128,
                "ngram_filter_sizes": [3],
                "conv_layer_activation": "relu",
            },
        },
    }
    if elmo:
        embedders["elmo"] = shared.elmo_embedder(bilm, layer_norm=False, dropout=0.0)
    model = {
        "type": "crf_tagger",
        "label_encoding": "BIOUL",
        "constrain_crf_decoding": True,
        "calculate_span_f1": True,
        "dropout": 0.5,
        "include_start_end_transitions": False,
        "text_field_embedder": {"token_embedders": embedders},
        "encoder": {
            "type": "lstm",
            "input_size": 50 + 128 + dim,
            "hidden_size": 200,
            "num_layers": 2,
            "dropout": 0.5,
            "bidirectional": True,
        },
    }
    if elmo:
        model["regularizer"] = shared.regularizer(0.1)
    reader = {
        "type": "conll2003",
        "tag_label": "ner",
        "coding_scheme": "BIOUL",
        "token_indexers": shared.indexers(elmo, chars=True, lowercase=False),
    }
    config = shared.common(
        seed,
        data["train"],
        data["dev"],
        reader,
        model,
        shared.trainer(epochs, {"type": "adam", "lr": 0.001}, "+f1-measure-overall", 5.0),
        32,
    )
    overrides = ["task.model.hidden=[200,200]", "task.model.dropout_style=standard"]
    matched = [
        "BiLSTM sizes [200, 200] on both sides (the reference's nn.LSTM has one size for both layers)",
        "dropout per element (the reference's style) on both sides",
        "batch size 32 (the suite's)",
        "cased words on both sides unless the arm lowercases them "
        "(the paper profile keeps case; ner_elmo.jsonnet lowercases)",
    ]
    return config, overrides, matched
