"""The task's tiny sample (``sources.sample``) as a copy of its Hugging Face data set (``source=hf``,
``stanfordnlp/sst``, configuration ``ptb``): one labelled PTB tree per row, so that the hub path is tested offline."""

from pathlib import Path

import datasets


def hub_sample(path: Path) -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {"ptb_tree": Path(path).read_text().splitlines()},
        features=datasets.Features({"ptb_tree": datasets.Value("string")}),
    )
