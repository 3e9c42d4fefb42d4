"""What every task's ``conformance.py`` shares (``benchmarks/conformance``: each head beside its allennlp-models
2.10.1 reference): the data writer and the pieces of an AllenNLP training configuration.

A task's ``reference_config(data, bilm, elmo, seed, epochs)`` returns ``(config, suite_overrides, matched)``: the
JSON configuration for ``allennlp_launcher.py``, the suite's ``run.py`` overrides for the same run, and the
settings that had to be aligned (shown in ``results/conformance.md``). No GloVe or Senna vectors exist offline, so
every reference word embedding is trainable and initialised as AllenNLP does (Xavier uniform), and the suite's side
runs without its shipped vectors (``task.model.vectors=null``, ``compare.run_suite``). Written from the published
``training_config/*.jsonnet`` files of allennlp-models 2.10.1 (read, not copied), changed where the suite's setting
differs as listed in ``matched``. Its ``prepare(out, limit)`` writes into ``out`` and returns ``{"suite":
{override: path}, "reference": {...}, "notes": [...]}``; the suite's readers do the reading, so both sides see the
same tokens.
"""

from __future__ import annotations

import json
from pathlib import Path

from suite_common.atomic_files import write_text_atomic

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ELMO_L2_REGEX = "scalar_parameters"


def write(path: Path, text: str) -> Path:
    """Complete or absent (a comparison running beside this one may be reading the same file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return path


def elmo_dim(options: Path) -> int:
    return 2 * json.loads(Path(options).read_text())["lstm"]["projection_dim"]


def trainer(epochs: int, optimizer: dict, metric: str, grad_norm: float | None, **extra) -> dict:
    trainer = {
        "optimizer": optimizer,
        "num_epochs": epochs,
        "validation_metric": metric,
        "cuda_device": -1,
        "callbacks": [{"type": "conformance_epoch_times"}],
        "checkpointer": {"keep_most_recent_by_count": 1},
    }
    if grad_norm:
        trainer["grad_norm"] = grad_norm
    trainer.update(extra)
    return trainer


def common(seed: int, train: Path, dev: Path, reader: dict, model: dict, trainer: dict, batch_size: int) -> dict:
    return {
        "random_seed": seed,
        "numpy_seed": seed,
        "pytorch_seed": seed,
        "dataset_reader": reader,
        "train_data_path": str(train),
        "validation_data_path": str(dev),
        "datasets_for_vocab_creation": ["train"],
        "model": model,
        "data_loader": {"batch_size": batch_size, "shuffle": True},
        "trainer": trainer,
    }


def elmo_embedder(bilm: dict, layer_norm: bool, dropout: float) -> dict:
    return {
        "type": "elmo_token_embedder",
        "options_file": str(bilm["options"]),
        "weight_file": str(bilm["weights"]),
        "do_layer_norm": layer_norm,
        "dropout": dropout,
        "requires_grad": False,
    }


def regularizer(l2: float) -> dict | None:
    return {"regexes": [[ELMO_L2_REGEX, {"type": "l2", "alpha": l2}]]} if l2 else None


def indexers(elmo: bool, chars: bool = False, lowercase: bool = False, min_char_padding: int = 3) -> dict:
    out = {"tokens": {"type": "single_id", "lowercase_tokens": lowercase}}
    if chars:
        out["token_characters"] = {"type": "characters", "min_padding_length": min_char_padding}
    if elmo:
        out["elmo"] = {"type": "elmo_characters"}
    return out
