"""The task's tiny sample (``sources.sample``, SQuAD JSON) as a copy of its Hugging Face data set
(``source=hf``, ``rajpurkar/squad``): one row per question, so that the hub path is tested offline."""

import json
from pathlib import Path

import datasets

V = datasets.Value


def hub_sample(path: Path) -> datasets.Dataset:
    data = json.loads(Path(path).read_text())
    rows = [
        {
            "id": q["id"],
            "title": article["title"],
            "context": paragraph["context"],
            "question": q["question"],
            "answers": {
                "text": [a["text"] for a in q["answers"]],
                "answer_start": [a["answer_start"] for a in q["answers"]],
            },
        }
        for article in data["data"]
        for paragraph in article["paragraphs"]
        for q in paragraph["qas"]
    ]
    features = datasets.Features(
        {
            "id": V("string"),
            "title": V("string"),
            "context": V("string"),
            "question": V("string"),
            "answers": {"text": datasets.Sequence(V("string")), "answer_start": datasets.Sequence(V("int32"))},
        }
    )
    return datasets.Dataset.from_list(rows, features=features)
