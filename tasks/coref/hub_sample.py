"""The task's tiny sample (``sources.sample``, CoNLL-2012 coreference) as a copy of its Hugging Face data set
(``source=hf``, ``ontonotes/conll2012_ontonotesv5``): each document's clusters as per-sentence
``coref_spans``, so that the hub path is tested offline."""

from pathlib import Path

import datasets

from ..common.hub import ontonotes_features, ontonotes_sentence
from .reader import read_conll2012_coref


def hub_sample(path: Path) -> datasets.Dataset:
    ds, _ = read_conll2012_coref(path)
    documents = []
    for doc in ds:
        sentences, offset = [], 0
        for words in doc["sentences"]:
            spans = [
                [c, start - offset, end - offset]
                for c, cluster in enumerate(doc["clusters"])
                for start, end in cluster
                if offset <= start and end < offset + len(words)
            ]
            sentences.append(ontonotes_sentence(words, spans=spans))
            offset += len(words)
        documents.append({"document_id": doc["doc_key"], "sentences": sentences})
    return datasets.Dataset.from_list(documents, features=ontonotes_features())
