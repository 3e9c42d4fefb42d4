"""The settings every task shares, typed: where its data are and how they are read (the defaults under
the ``data`` and ``sources`` of ``conf/task/<task>.yaml``), the word and character embeddings of its
model, the task group itself (Peters et al. 2018 appendix A sizes each task's model), the ELMo mix its
model owns (§3.2-3.3) and its trainer's settings. Each task
folder's ``config.py`` declares its own model settings on these (``suite_common.typed_config``: a
field's default, accepted values and part in a run's identity sit beside it). These defaults are the
base of the composed configuration (``experiments.config_store``); the YAML files hold only what
differs, and profiles."""

from __future__ import annotations

from typing import Literal

from static_vectors import SHIPPED_VECTORS, shipped_vectors
from suite_common.typed_config import (
    FilePath,
    Flag,
    PathText,
    Probability,
    Text,
    file_setting,
    group,
    integer,
    number,
    setting,
    settings_group,
)

from .folds import folds_problem

EMBEDDING_INITS = ("normal", "xavier_uniform")


def reads_local(run) -> bool:
    data = run.data
    return bool(getattr(data, "dir", None) or any(getattr(data, f"{s}_path", None) for s in ("train", "dev", "test")))


def reads_hub(run) -> bool:
    return not reads_local(run)


def hub(default=None):
    """A Hugging Face dataset setting: it counts only when the hub's copy is read (no local files given)."""
    return setting(default, when=reads_hub)


@settings_group
class DataConfig:
    """A task's data: local files (``dir`` + ``*_file``, or ``*_path``) or the Hugging Face dataset."""

    format: Text | None = setting(None)  # which reader; null: the task's first
    # a data set's own name and a note on it (conf/data/<name>.yaml): the report's row name and its note
    label: Text | None = setting(None, counts=False)
    note: Text | None = setting(None, counts=False)
    hf_name: str | None = hub()
    hf_revision: str | None = hub()
    hf_data_dir: str | None = hub()
    hf_config: str | None = hub()  # the dataset's configuration name (without hf_data_dir)
    hf_split: dict[Literal["train", "dev", "test"], Text | None] = hub(
        {"train": "train", "dev": "validation", "test": None}
    )
    dir: PathText | None = setting(None, counts=False)  # the files read there count by their content
    train_file: Text | None = setting(None)
    dev_file: Text | None = setting(None)
    test_file: Text | None = setting(None)
    fraction: number(0, 1, low_open=True) = setting(1.0)  # a fixed, nested subset of the training set
    # cross-validation (tasks/common/folds.py): train and dev pooled into `folds` folds, fold `fold` held out as dev
    folds: integer(2) | None = setting(None, added_after_records=True)
    fold: integer(0) | None = setting(None, added_after_records=True)

    def __post_init__(self):
        if problem := folds_problem(self.folds, self.fold):
            raise ValueError(problem)

    train_path: PathText | None = setting(None, counts=False)
    dev_path: PathText | None = setting(None, counts=False)
    test_path: PathText | None = setting(None, counts=False)


@settings_group
class TaggedProbeData:
    """A layer probe's tagged files (``probe_pos``)."""

    dir: PathText | None = setting(None, counts=False)
    train_file: Text | None = setting(None)
    dev_file: Text | None = setting(None)
    train_path: PathText | None = setting(None, counts=False)
    dev_path: PathText | None = setting(None, counts=False)
    test_path: PathText | None = setting(None, counts=False)


@settings_group
class SenseProbeData:
    """The word-sense probe's SENSEVAL-2 files (``probe_wsd``): one ``<word>.pos`` per word."""

    dir: PathText | None = setting(None, counts=False)
    words: list[Text] = setting(["hard", "interest", "line", "serve"])
    split_seed: integer(0) = setting(0)


@settings_group
class WordModelConfig:
    """Word embedding (optionally from a vectors file) + character CNN, the input of every task model."""

    word_dim: integer(1) = setting(100)
    # a GloVe text file or the suite's .hdf5 (static_vectors.store); "shipped": the suite's own vectors of
    # word_dim dimensions (static_vectors/pretrained/lm-text), none where it ships no such size
    vectors: FilePath | None = file_setting(
        "files_sha256",
        in_config=True,
        default=SHIPPED_VECTORS,
        earlier=None,
        resolve=lambda v, m: resolve_vectors(v, m),
    )
    freeze_vectors: Flag = setting(False)
    # where no vector is given: AllenNLP's xavier_uniform ("normal", PyTorch's N(0, 1), is what records
    # of before 2026-12-01 used)
    embedding_init: Literal[EMBEDDING_INITS] = setting("xavier_uniform", earlier="normal")
    min_word_count: integer(1) = setting(1)
    char_dim: integer(1) = setting(16)
    char_filters: integer(0) = setting(0)  # 0: no character CNN
    char_width: integer(1) = setting(3)
    dropout: Probability = setting(0.0)

    @property
    def vectors_file(self) -> str | None:
        """The vectors file the model reads: ``vectors``, or for ``shipped`` the shipped file of ``word_dim``
        dimensions (None where none is shipped)."""
        return resolve_vectors(self.vectors, self)


def resolve_vectors(value: str | None, model) -> str | None:
    """``task.model.vectors`` as a file: ``shipped`` is the shipped file of the model's ``word_dim``."""
    return shipped_vectors(model.word_dim) if value == SHIPPED_VECTORS else value


@settings_group
class TaskConfig:
    """``conf/task/<name>.yaml``: the task's name, where the paper puts ELMo for it, and its model."""

    name: Text | None = setting("")
    elmo_position: Literal["input", "output", "both", "probe"] = setting("input")
    model: WordModelConfig = group(WordModelConfig)


@settings_group
class ElmoConfig:
    """Where ELMo goes (§3.3: with x_k, with h_k, both, none, or ``paper``: the task's own) and its mix (§3.2)."""

    position: Literal["none", "input", "output", "both", "paper"] = setting("paper")
    mix: Literal["all", "last", "average"] = setting("all")
    l2: number(0) = setting(0.001)
    dropout: Probability = setting(0.5)
    layer_norm: Flag = setting(False)


def _equal_updates_count(run) -> bool:
    return bool(run.trainer.equal_updates) and float(getattr(run.data, "fraction", 1.0)) < 1


@settings_group
class TrainerConfig:
    """The one trainer's settings (``experiments.trainer``)."""

    optimizer: Literal["adam", "adadelta"] = setting("adam")
    lr: number(0, low_open=True) = setting(0.001)
    adadelta_rho: number(0, 1, low_open=True, high_open=True) = setting(0.95)
    batch_size: integer(1) = setting(32)
    eval_batch_size: integer(1) = setting(128)
    max_epochs: integer(1) = setting(30)
    # the fewest updates a run is given: where max_epochs epochs make fewer, the epochs are raised to reach it
    # (experiments.trainer.epochs_for; the quick profile's one rule for small data sets, docs/tasks.md)
    min_updates: integer(0) = setting(0, added_after_records=True)
    patience: integer(1) = setting(5)
    grad_clip: number(0) = setting(5.0)
    weight_decay: number(0) = setting(0.0)
    ema: Probability = setting(0.0)
    lr_halving: Flag = setting(False)
    # the updates without a better dev score before a halving: the paper's data set's epoch, so that a smaller
    # stand-in halves after as many updates (SICK for SNLI, experiments.trainer.halving_patience);
    # 0: after every epoch without one
    lr_halving_updates: integer(0) = setting(0, added_after_records=True)
    equal_updates: Flag = setting(False, when=_equal_updates_count)
    # best_dev: the epoch of the best dev metric, with early stopping (patience); last: every one of max_epochs
    # epochs and the last kept, no choice made on dev (a cross-validation's held-out fold, data.folds)
    keep: Literal["best_dev", "last"] = setting("best_dev", added_after_records=True)

    def __post_init__(self):
        if self.keep == "last" and self.lr_halving:
            raise ValueError(
                "trainer.keep=last makes no choice on dev; trainer.lr_halving would (it halves on a plateau)"
            )
