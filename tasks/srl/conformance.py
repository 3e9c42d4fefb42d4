"""SRL's head beside allennlp-models' ``srl`` (``benchmarks/conformance``, ``results/conformance.md``).

``prepare`` writes the data both sides read: Universal PropBank read by the suite's reader and written as
CoNLL-2012 ``*gold_conll`` (one bracketed column per predicate, in predicate order; sentences without a
predicate dropped, as the suite drops them); both sides read the written files. ``reference_config`` is the
reference's AllenNLP configuration at the suite's paper-profile settings (``tasks/common/conformance.py``).
"""

from __future__ import annotations

from pathlib import Path

from tasks.common import conformance as shared

from .reader import read_conllu_propbank_file

TITLE = "SRL (Universal PropBank)"
REFERENCE_MODEL = "srl"  # its AllenNLP model type
PACKAGE = "allennlp_models.structured_prediction"
METRIC = "f1-measure-overall"  # the reference's name of the dev metric


def _gold_conll_rows(doc: str, tokens: list[str], columns: list[list[str]]) -> list[str]:
    rows = []
    for i, token in enumerate(tokens):
        cells = [doc, "0", str(i), token, "XX", "*", "-", "-", "-", "-", "*"] + [c[i] for c in columns] + ["-"]
        rows.append("\t".join(cells))
    return rows


def bio_to_brackets(tags: list[str]) -> list[str]:
    """BIO tags of one predicate as a CoNLL-2012 argument column: ``(ARG0*``, ``*``, ``*)``, ``(V*)``."""
    column = ["*"] * len(tags)
    for i, tag in enumerate(tags):
        if tag.startswith("B-"):
            column[i] = f"({tag[2:]}*"
        inside_next = i + 1 < len(tags) and tags[i + 1].startswith("I-")
        if tag != "O" and not inside_next:
            column[i] += ")"
    return column


def prepare(out: Path, limit: int | None) -> dict:
    paths, labels = {}, set()  # every tag of both splits: a dev-only tag must be a known label to the reference
    for split in ("train", "dev"):
        ds, _ = read_conllu_propbank_file(shared.SHARED_DATA / "srl_up_en" / f"{split}.conllu")
        sentences: dict[int, list[dict]] = {}
        labels.update(t for ex in ds for t in ex["tags"])
        for ex in ds:
            sentences.setdefault(ex["sentence"], []).append(ex)
        keys = sorted(sentences)
        if split == "train" and limit:
            keys = keys[:limit]
        lines = [f"#begin document (up_{split}); part 0"]
        for k in keys:
            frames = sorted(sentences[k], key=lambda e: e["predicate"])
            lines += _gold_conll_rows(f"up_{split}", frames[0]["tokens"], [bio_to_brackets(f["tags"]) for f in frames])
            lines.append("")
        lines.append("#end document")
        paths[split] = shared.write(out / split / f"up_{split}.gold_conll", "\n".join(lines) + "\n")
    return {
        "suite": {"data.train_path": paths["train"], "data.dev_path": paths["dev"], "data.format": "conll2012"},
        "reference": {"train": paths["train"].parent, "dev": paths["dev"].parent, "labels": sorted(labels)},
        "notes": [
            "Universal PropBank converted once to CoNLL-2012 columns (one-token argument spans); "
            "both sides read the converted files"
        ],
    }


def reference_config(data: dict, bilm: dict, elmo: bool, seed: int, epochs: int):
    dim = shared.elmo_dim(bilm["options"]) if elmo else 0
    embedders = {"tokens": {"type": "embedding", "embedding_dim": 100, "trainable": True}}
    if elmo:
        embedders["elmo"] = shared.elmo_embedder(bilm, layer_norm=False, dropout=0.1)
    model = {
        "type": "srl",
        "text_field_embedder": {"token_embedders": embedders},
        "embedding_dropout": 0.1,
        "binary_feature_dim": 100,
        "encoder": {
            "type": "alternating_lstm",
            "input_size": 100 + dim + 100,
            "hidden_size": 300,
            "num_layers": 8,
            "recurrent_dropout_probability": 0.1,
            "use_highway": True,
        },
        "initializer": {"regexes": [["tag_projection_layer.*weight", {"type": "orthogonal"}]]},
    }
    if elmo:
        model["regularizer"] = shared.regularizer(0.001)
    reader = {"type": "srl", "token_indexers": shared.indexers(elmo)}
    config = shared.common(
        seed,
        data["train"],
        data["dev"],
        reader,
        model,
        shared.trainer(epochs, {"type": "adadelta", "lr": 1.0, "rho": 0.95}, "+f1-measure-overall", 1.0),
        32,
    )
    # the suite knows every tag it is given; the reference's label vocabulary comes from the training split
    config["vocabulary"] = {"type": "from_instances", "tokens_to_add": {"labels": list(data["labels"])}}
    overrides = []
    matched = [
        "span F1 by the official srl-eval.pl on the reference side (its bundled copy), the suite's "
        "matched scorer on the other; V spans excluded on both",
        "word embeddings 100-d trainable (srl_elmo.jsonnet reads ELMo alone; the paper adds GloVe)",
    ]
    return config, overrides, matched
