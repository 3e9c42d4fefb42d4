"""The Hugging Face copies of the tasks' data (``source=hf``, the default).

``datasets`` 4 and later refuse datasets that are loading scripts, which CoNLL-2003, SST and
OntoNotes (CoNLL-2012) are on the hub; for those the data configs name the hub's own Parquet
export of the same dataset (``hf_revision: refs/convert/parquet``, one folder per configuration,
``hf_data_dir``), which keeps the original features and label names. SQuAD and SNLI are Parquet
already. ``hf_name`` may also be a local folder laid out the same way (the tests use one).

Without network the hub is not tried for long: an unreachable endpoint switches ``datasets`` to
its offline mode (the local cache only), and a dataset that is not cached is one line naming
``source=local``.
"""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlparse

import datasets

from suite_common.errors import DataError


def hub_reachable(timeout: float = 3.0) -> bool:
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    try:
        with socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout):
            return True
    except OSError:
        return False


def go_offline() -> None:
    """Use only what the local cache holds (no retries against an unreachable hub)."""
    from huggingface_hub import constants

    datasets.config.HF_HUB_OFFLINE = True
    constants.HF_HUB_OFFLINE = True


def load_hub_split(data_cfg, split: str) -> datasets.Dataset:
    """One split of ``data.hf_name`` (with ``hf_config``, or ``hf_revision`` + ``hf_data_dir`` for a
    Parquet export); any failure is a ``DataError`` that says how to use local files instead."""
    name = str(data_cfg.hf_name)
    kwargs = {"split": split}
    if data_cfg.hf_revision:
        kwargs["revision"] = data_cfg.hf_revision
    if data_cfg.hf_data_dir:
        kwargs["data_dir"] = data_cfg.hf_data_dir
    args = [name] + ([data_cfg.hf_config] if data_cfg.hf_config and not data_cfg.hf_data_dir else [])
    offline = not Path(name).exists() and not hub_reachable()
    if offline:
        go_offline()
    try:
        return datasets.load_dataset(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - ConnectionError, FileNotFoundError, DatasetNotFoundError, ValueError ...
        reason = (
            "the Hugging Face hub cannot be reached and it is not in the local cache"
            if offline
            else f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        )
        raise DataError(
            f"cannot load the Hugging Face dataset {name!r} [{split}] ({reason}); use the local files "
            "instead: source=local (../shared/data or $ELMO_SHARED/data) or data.dir=DIR"
        ) from None


def ontonotes_features() -> datasets.Features:
    """The features of the hub's OntoNotes copy (``ontonotes/conll2012_ontonotesv5``), which SRL and coreference
    read: a document of sentences, each with its words, SRL frames and coreference spans."""
    v, seq = datasets.Value, datasets.Sequence
    sentence = {
        "part_id": v("int32"),
        "words": seq(v("string")),
        "pos_tags": seq(v("int32")),
        "parse_tree": v("string"),
        "predicate_lemmas": seq(v("string")),
        "predicate_framenet_ids": seq(v("string")),
        "word_senses": seq(v("float32")),
        "speaker": v("string"),
        "named_entities": seq(v("int32")),
        "srl_frames": [{"verb": v("string"), "frames": seq(v("string"))}],
        "coref_spans": seq(seq(v("int32"))),
    }
    return datasets.Features({"document_id": v("string"), "sentences": [sentence]})


def ontonotes_sentence(words: list[str], frames=(), spans=()) -> dict:
    """One sentence in ``ontonotes_features``' schema: its SRL ``frames`` (BIO tags, one ``B-V`` each) and
    coreference ``spans`` ([cluster, start, end], inclusive, in the sentence); empty annotation elsewhere."""
    n = len(words)
    return {
        "part_id": 0,
        "words": words,
        "pos_tags": [0] * n,
        "parse_tree": "",
        "predicate_lemmas": [""] * n,
        "predicate_framenet_ids": [""] * n,
        "word_senses": [0.0] * n,
        "speaker": "",
        "named_entities": [0] * n,
        "srl_frames": [{"verb": words[f.index("B-V")], "frames": f} for f in frames],
        "coref_spans": list(spans),
    }
