"""The settings every task shares, typed: where its data are and how they are read (the defaults under
the ``data`` and ``sources`` of ``conf/task/<task>.yaml``), the word and character embeddings of its
model, and the task group itself (Peters et al. 2018 appendix A sizes each task's model). Each task
folder's ``config.py`` declares its own model settings on these (``suite_common.typed_config``: a
field's default, accepted values and part in a run's identity sit beside it). These defaults are the
base of the composed configuration (``experiments.config_store``); the YAML files hold only what
differs, and profiles."""

from __future__ import annotations

from dataclasses import dataclass

from suite_common.typed_config import (
    LOCATION,
    PROBABILITY,
    FilePath,
    boolean,
    file_setting,
    group,
    integer,
    number,
    one_of,
    setting,
    text_or_none,
)

EMBEDDING_INITS = ("normal", "xavier_uniform")


def reads_local(run) -> bool:
    data = run.data
    return bool(getattr(data, "dir", None) or any(getattr(data, f"{s}_path", None) for s in ("train", "dev", "test")))


def reads_hub(run) -> bool:
    return not reads_local(run)


def hub(default=None):
    """A Hugging Face dataset setting: it counts only when the hub's copy is read (no local files given)."""
    return setting(default, identity="counts", when=reads_hub)


@dataclass(frozen=True)
class DataConfig:
    """A task's data: local files (``dir`` + ``*_file``, or ``*_path``) or the Hugging Face dataset."""

    format: str | None = setting(None, text_or_none)  # which reader; null: the task's first
    hf_name: str | None = hub()
    hf_revision: str | None = hub()
    hf_data_dir: str | None = hub()
    hf_config: str | None = hub()  # the dataset's configuration name (without hf_data_dir)
    hf_split: dict = hub({"train": "train", "dev": "validation", "test": None})
    dir: str | None = setting(None, identity=LOCATION)  # the files read there count by their content
    train_file: str | None = setting(None, text_or_none)
    dev_file: str | None = setting(None, text_or_none)
    test_file: str | None = setting(None, text_or_none)
    fraction: float = setting(1.0, number(0, 1, low_open=True))  # a fixed, nested subset of the training set
    train_path: str | None = setting(None, identity=LOCATION)
    dev_path: str | None = setting(None, identity=LOCATION)
    test_path: str | None = setting(None, identity=LOCATION)


@dataclass(frozen=True)
class TaggedProbeData:
    """A layer probe's tagged files (``probe_pos``)."""

    dir: str | None = setting(None, identity=LOCATION)
    train_file: str | None = setting(None, text_or_none)
    dev_file: str | None = setting(None, text_or_none)
    train_path: str | None = setting(None, identity=LOCATION)
    dev_path: str | None = setting(None, identity=LOCATION)
    test_path: str | None = setting(None, identity=LOCATION)


@dataclass(frozen=True)
class SenseProbeData:
    """The word-sense probe's SENSEVAL-2 files (``probe_wsd``): one ``<word>.pos`` per word."""

    dir: str | None = setting(None, identity=LOCATION)
    words: list = setting(["hard", "interest", "line", "serve"])
    split_seed: int = setting(0, integer(0))


@dataclass(frozen=True)
class WordModelConfig:
    """Word embedding (optionally from a vectors file) + character CNN, the input of every task model."""

    word_dim: int = setting(100, integer(1))
    vectors: FilePath | None = file_setting("files_sha256", in_config=True)  # a GloVe-style text file
    freeze_vectors: bool = setting(False, boolean)
    embedding_init: str = setting("normal", one_of(*EMBEDDING_INITS))
    min_word_count: int = setting(1, integer(1))
    char_dim: int = setting(16, integer(1))
    char_filters: int = setting(0, integer(0))  # 0: no character CNN
    char_width: int = setting(3, integer(1))
    dropout: float = setting(0.0, PROBABILITY)


@dataclass(frozen=True)
class TaskConfig:
    """``conf/task/<name>.yaml``: the task's name, where the paper puts ELMo for it, and its model."""

    name: str = setting("", text_or_none)
    elmo_position: str = setting("input", one_of("input", "output", "both", "probe"))
    model: WordModelConfig = group(WordModelConfig)
