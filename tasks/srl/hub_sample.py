"""The task's tiny sample (``sources.sample``, CoNLL-U PropBank) as a copy of its Hugging Face data set
(``source=hf``, ``ontonotes/conll2012_ontonotesv5``): one document per sentence with its SRL frames, so that
the hub path is tested offline."""

from pathlib import Path

import datasets

from ..common.hub import ontonotes_features, ontonotes_sentence
from .reader import read_conllu_propbank_file


def hub_sample(path: Path) -> datasets.Dataset:
    ds, _ = read_conllu_propbank_file(path)
    sentences = {}
    for row in ds:  # one row per predicate
        sentences.setdefault(row["sentence"], (row["tokens"], []))[1].append(row["tags"])
    documents = [
        {"document_id": f"nw/sample/{i}", "sentences": [ontonotes_sentence(words, frames)]}
        for i, (words, frames) in sentences.items()
    ]
    return datasets.Dataset.from_list(documents, features=ontonotes_features())
