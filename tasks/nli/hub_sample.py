"""The task's tiny sample (``sources.sample``, SICK TSV) as a copy of its Hugging Face data set (``source=hf``,
``stanfordnlp/snli``): premise, hypothesis and a ``ClassLabel`` whose names are the reader's label order, with
one pair more that has no gold label (-1, as the hub's SNLI has), so that the hub path is tested offline."""

from pathlib import Path

import datasets

from .reader import LABELS, read_sick_tsv

DROPPED = {"no_gold_label_dropped": 1}  # what reading the copy must report


def hub_sample(path: Path) -> datasets.Dataset:
    ds, _ = read_sick_tsv(path)
    rows = {
        "premise": [" ".join(p) for p in ds["premise"]] + [" ".join(ds[0]["premise"])],
        "hypothesis": [" ".join(h) for h in ds["hypothesis"]] + [" ".join(ds[0]["hypothesis"])],
        "label": list(ds["label"]) + [-1],
    }
    features = {"premise": datasets.Value("string"), "hypothesis": datasets.Value("string")}
    return datasets.Dataset.from_dict(
        rows, features=datasets.Features({**features, "label": datasets.ClassLabel(names=LABELS)})
    )
