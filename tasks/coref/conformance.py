"""Coreference's head beside allennlp-models' ``coref`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: LitBank's CoNLL files with the empty columns the OntoNotes reader
parses filled (POS ``XX`` so that no parse tree is built, ``-`` for lemma, frame, sense and speaker, ``*`` for
named entities); tokens, sentence breaks and the coreference column unchanged. The reference's training file
holds the suite's training windows, each as a document. ``reference_config`` is the reference's AllenNLP
configuration at the suite's paper-profile settings (``tasks/common/conformance.py``).
"""

from __future__ import annotations

from pathlib import Path

from tasks.common import conformance as shared

from .config import CorefConfig

TITLE = "coreference (LitBank)"
REFERENCE_MODEL = "coref"  # its AllenNLP model type
PACKAGE = "allennlp_models.coref"
METRIC = "coref_f1"  # the reference's name of the dev metric


def _litbank_documents(split: str, limit: int | None) -> list[tuple[str, list[list[str]]]]:
    """LitBank's documents as (name, sentences of rows), the rows with the columns the OntoNotes
    reader parses filled in."""
    documents: list[tuple[str, list[list[str]]]] = []
    for line in (shared.SHARED_DATA / "coref_litbank" / f"{split}.conll").read_text(encoding="utf-8").splitlines():
        if line.startswith("#begin document"):
            if split == "train" and limit and len(documents) == limit:
                break
            documents.append((line.split("(", 1)[1].split(")", 1)[0], [[]]))
        elif line.strip() and not line.startswith("#"):
            c = line.split("\t")
            documents[-1][1][-1].append("\t".join(c[:4] + ["XX", "*", "-", "-", "-", "-", "*", c[-1].strip() or "-"]))
        elif not line.strip() and documents and documents[-1][1][-1]:
            documents[-1][1].append([])
    return [(name, [s for s in sentences if s]) for name, sentences in documents]


def _conll_text(documents: list[tuple[str, list[list[str]]]]) -> str:
    lines = []
    for name, sentences in documents:
        lines.append(f"#begin document ({name}); part 0")
        for rows in sentences:
            lines += [name + row[row.index("\t") :] for row in rows] + [""]
        lines += ["#end document", ""]
    return "\n".join(lines) + "\n"


def prepare(out: Path, limit: int | None) -> dict:
    """The suite trains on consecutive windows of ``max_training_sentences`` sentences of every
    training document (``tasks.coref.task.windows``); AllenNLP's reader keeps a document's first
    ``max_sentences`` and drops the rest. So the reference reads the same windows, each written as
    a document of its own; dev is whole documents on both sides."""
    window = CorefConfig().max_training_sentences
    train, dev = _litbank_documents("train", limit), _litbank_documents("dev", None)
    windows = [
        (f"{name}_w{first}", sentences[first : first + window])
        for name, sentences in train
        for first in range(0, len(sentences), window)
    ]
    paths = {
        "train": shared.write(out / "train.gold_conll", _conll_text(train)),
        "dev": shared.write(out / "dev.gold_conll", _conll_text(dev)),
        "reference_train": shared.write(out / f"train.windows{window}.gold_conll", _conll_text(windows)),
    }
    return {
        "suite": {"data.train_path": paths["train"], "data.dev_path": paths["dev"]},
        "reference": {"train": paths["reference_train"], "dev": paths["dev"], "window": window},
        "notes": [
            f"train: the first {limit or 'all'} LitBank training documents "
            f"({sum(len(sentences) for _, sentences in train)} sentences) in windows of {window} sentences on both "
            f"sides (the reference reads its {len(windows)} windows written as documents); dev: all {len(dev)} "
            "documents whole on both sides; the files with the columns the OntoNotes reader parses filled in"
        ],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    embedders = {
        "tokens": {"type": "embedding", "embedding_dim": 300, "trainable": True},
        "token_characters": {
            "type": "character_encoding",
            "embedding": {"embedding_dim": 8},
            "encoder": {"type": "cnn", "embedding_dim": 8, "num_filters": 50, "ngram_filter_sizes": [3, 4, 5]},
        },
    }
    if elmo:
        embedders["elmo"] = shared.elmo_embedder(bilm, layer_norm=False, dropout=0.5)
    span = 2 * 400 + (300 + 150 + dim) + 20
    model = {
        "type": "coref",
        "text_field_embedder": {"token_embedders": embedders},
        "context_layer": {
            "type": "lstm",
            "bidirectional": True,
            "input_size": 300 + 150 + dim,
            "hidden_size": 200,
            "num_layers": 1,
        },
        "mention_feedforward": {
            "input_dim": span,
            "num_layers": 2,
            "hidden_dims": 150,
            "activations": "relu",
            "dropout": 0.2,
        },
        "antecedent_feedforward": {
            "input_dim": 3 * span + 20,
            "num_layers": 2,
            "hidden_dims": 150,
            "activations": "relu",
            "dropout": 0.2,
        },
        "initializer": {
            "regexes": [
                [".*linear_layers.*weight", {"type": "xavier_normal"}],
                [".*scorer._module.weight", {"type": "xavier_normal"}],
                ["_distance_embedding.weight", {"type": "xavier_normal"}],
                ["_span_width_embedding.weight", {"type": "xavier_normal"}],
                ["_context_layer._module.weight_ih.*", {"type": "xavier_normal"}],
                ["_context_layer._module.weight_hh.*", {"type": "orthogonal"}],
            ]
        },
        "lexical_dropout": 0.5,
        "feature_size": 20,
        "max_span_width": 10,
        "spans_per_word": 0.4,
        "max_antecedents": 250,
    }
    reader = {
        "type": "coref",
        "max_span_width": 10,
        "max_sentences": 50,
        "token_indexers": shared.indexers(elmo, chars=True, min_char_padding=5),
    }
    config = shared.common(
        seed,
        data["train"],
        data["dev"],
        reader,
        model,
        shared.trainer(epochs, {"type": "adam", "lr": 0.001}, "+coref_f1", 5.0),
        1,
    )
    # dev documents whole: the training reader's ``max_sentences`` would keep only their first 50 sentences
    config["validation_dataset_reader"] = {k: v for k, v in reader.items() if k != "max_sentences"}
    overrides = []
    matched = [
        f"one document per batch: a training window of {data['window']} sentences or a whole dev document (both sides)"
    ]
    return config, overrides, matched
