"""The task's tiny sample (``sources.sample``) as a copy of its Hugging Face data set (``source=hf``,
``eriktks/conll2003``): the hub's columns and ``ClassLabel`` names, so that the hub path is tested offline."""

from pathlib import Path

import datasets

from .reader import read_conll2003_file

NER_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def hub_sample(path: Path) -> datasets.Dataset:
    ds, _ = read_conll2003_file(path)
    tags = datasets.Sequence(datasets.ClassLabel(names=NER_NAMES))
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "pos_tags": datasets.Sequence(datasets.ClassLabel(names=["NN", "NNP"])),
            "chunk_tags": datasets.Sequence(datasets.ClassLabel(names=["O", "B-NP"])),
            "ner_tags": tags,
        }
    )
    rows = {
        "id": [str(i) for i in range(len(ds))],
        "tokens": ds["tokens"],
        "pos_tags": [[0] * len(t) for t in ds["tokens"]],
        "chunk_tags": [[0] * len(t) for t in ds["tokens"]],
        "ner_tags": [[NER_NAMES.index(t) for t in sentence] for sentence in ds["tags"]],
    }
    return datasets.Dataset.from_dict(rows, features=features)
