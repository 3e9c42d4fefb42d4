"""A run's record, typed: what ``run.py`` writes as ``results.json`` (a task run, Peters et al. 2018
§4 and Tables 1-3; a layer probe, §5.3) or ``finetune.json`` (Table 7), and what the report reads.

The runner builds a ``Record`` and writes it (``write``); the report reads one (``Record.read``) and
asks it what the run was: its ELMo position, whether it read an encoder, which biLM it depends on,
its ablation setting and variant, its Transformer's label. Each of these is decided here once, from
what the runner stored, so the tables never re-derive a setting from a raw configuration. A record
states its format (``record_version``); one of another version is refused with one line (keys this
version does not know are kept when a record is rewritten). The identity (``config_hash``) is
computed from ``config`` and ``identity`` only (``plan.record_digest``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite_common.atomic_files import write_text_atomic
from suite_common.bounded_files import MB, read_bounded
from suite_common.errors import ConfigError, DataError

if TYPE_CHECKING:
    from .run_config import RunConfig

RECORD_NAMES = ("results.json", "finetune.json")
# 2: configurations in the layout of encoder.* and cache.*, digests from the typed configuration
# (``run_config``); every committed record was migrated once. A record of another version is refused.
RECORD_VERSION = 2
TASK_RUN_NULLABLE = ("test", "bilm_finetune")
MAX_RECORD_BYTES = 16 * MB  # the largest committed record is under 100 KB


class RecordSchemaError(DataError):
    """A record whose fields are not of the kinds the suite writes (a hand edit, another tool's file): the
    report lists it apart with this reason, and no table reads it."""


NUMBER = (int, float)
FIELD_KINDS = {  # a record's fields and the kinds the suite writes (None: may be null)
    "bilm": (dict, None), "transformer": (dict, None), "identity": (dict, None), "hardware": (dict,),
    "date": (str,), "command": (str,), "ablation": (str, None), "profile": (str, None), "data_set": (str, None),
    "run_dir": (str,), "config_hash": (str, None), "task": (str, None), "metric": (str, None), "dev": (dict, None),
    "test": (dict, None), "elmo_position": (str, None), "train_examples": (int, None), "mixing_weights": (dict, None),
    "mix_weights": (dict, list, None), "best_epoch": (int, None), "epochs": (list, int, None),
    "train_seconds": (*NUMBER, None), "data_stats": (dict, None), "data_warnings": (list, None),
    "prediction_files": (dict, None), "predictions": (dict, None), "bilm_finetune": (dict, None),
    "reused_from": (str, None), "resumed_from_epoch": (int, None), "config_hash_before_identity": (str, None),
}  # fmt: skip
CONFIG_GROUPS = ("data", "task", "elmo", "encoder", "cache", "trainer")


def _kind_ok(value, kinds) -> bool:
    if value is None:
        return None in kinds
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, tuple(k for k in kinds if k is not None))


def schema_problem(data: dict) -> str | None:
    """What makes ``data`` (a parsed record) other than what the suite writes, or None: a field of another
    kind, a configuration group that is not a mapping, a task name that is not a string."""
    for key, kinds in FIELD_KINDS.items():
        if key in data and not _kind_ok(data[key], kinds):
            return f"{key}={data[key]!r} is not {' or '.join('null' if k is None else k.__name__ for k in kinds)}"
    config = data["config"]
    for group in CONFIG_GROUPS:
        if group in config and config[group] is not None and not isinstance(config[group], dict):
            return f"config.{group}={config[group]!r} is not a mapping of settings"
    name = (config.get("task") or {}).get("name")
    if name is not None and not isinstance(name, str):
        return f"config.task.name={name!r} is not a string"
    return None


@dataclass
class Record:
    # what every record holds (``run_directories.run_metadata``), in the order records have it
    record_version: int | None = None  # RECORD_VERSION
    bilm: dict | None = (
        None  # the biLM's files and hash (a Transformer run's record of the earlier layout had its model here)
    )
    transformer: dict | None = None  # a Transformer run's model, files and hash
    identity: dict | None = None  # what the run's files held and its code's version (``plan.make_identity``)
    hardware: dict = field(default_factory=dict)
    date: str = "?"
    command: str = "?"
    ablation: str | None = None
    profile: str | None = None
    data_set: str | None = None  # a data set chosen by name (data=wnut17: conf/data/wnut17.yaml), not the task's own
    run_dir: str = ""
    config_hash: str | None = None
    config: dict = field(default_factory=dict)  # the resolved configuration
    task: str = ""
    # what the run measured
    metric: str | None = None
    dev: dict | None = None
    test: dict | None = None  # a trained task model: null when no test file was scored
    elmo_position: str | None = None  # none | input | output | both | probe, as the run resolved it
    train_examples: int | None = None
    mixing_weights: dict | None = None
    mix_weights: dict | list | None = None  # a probe's
    best_epoch: int | None = None
    epochs: list | None = None  # each epoch's training loss, dev metric and time
    train_seconds: float | None = None
    data_stats: dict | None = None
    data_warnings: list | None = None
    prediction_files: dict | None = None  # the official scorers' formats, in the run directory
    predictions: dict | None = None  # per split, the compact predictions kept with the record (``predictions_file``)
    bilm_finetune: dict | None = None
    # bookkeeping
    reused_from: str | None = None  # a finished run of the same identity, launched under another name
    resumed_from_epoch: int | None = None  # the run was stopped and resumed after this epoch (``train_state``)
    config_hash_before_identity: str | None = None
    unknown: dict = field(default_factory=dict)  # keys of a newer version, kept on rewrite
    path: Path | None = field(default=None, compare=False)

    # ---- reading and writing -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict, path: Path | None = None) -> Record:
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            raise DataError(f"{path or 'record'}: not a run record (no 'config' object)")
        version = data.get("record_version")
        if version != RECORD_VERSION:
            newer = isinstance(version, int) and not isinstance(version, bool) and version > RECORD_VERSION
            raise DataError(
                f"{path or 'record'}: record_version {version!r}, this suite reads {RECORD_VERSION} "
                + (
                    "(a record of a newer version of the suite: update the suite to read it)"
                    if newer
                    else "(records of earlier versions are not read: run the configuration again)"
                )
            )
        problem = schema_problem(data)
        if problem:
            raise RecordSchemaError(f"{path or 'record'}: {problem}; not a record this suite writes")
        known = {f.name for f in dataclasses.fields(cls)} - {"unknown", "path"}
        task = data.get("task") or (data["config"].get("task") or {}).get("name")
        if not task:
            raise DataError(f"{path or 'record'}: not a run record (no task)")
        record = cls(
            **{k: v for k, v in data.items() if k in known and k != "task"},
            task=task,
            unknown={k: v for k, v in data.items() if k not in known},
            path=path,
        )
        if record.composed:
            try:
                record.run  # noqa: B018 (read into its typed form once, here)
            except ConfigError as e:
                raise RecordSchemaError(f"{path or 'record'}: {e}; not a record this suite writes") from None
        return record

    @classmethod
    def read(cls, path: Path) -> Record:
        raw = read_bounded(path, MAX_RECORD_BYTES, "run record")  # a regular file, not a link, FIFO or giant
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            raise DataError(f"{path}: unreadable run record ({type(e).__name__}: {e})") from None
        return cls.from_dict(data, Path(path))

    def to_dict(self) -> dict:
        """The JSON object: every field that is set, in the order records have always had; a trained
        task model's record also has ``test`` (no test file scored) and ``bilm_finetune`` (the biLM
        was not fine-tuned) when they are null."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("unknown", "path"):
                continue
            value = getattr(self, f.name)
            if (
                value is not None
                or f.name in ("ablation", "profile")
                or (f.name in TASK_RUN_NULLABLE and self.epochs is not None)
            ):
                out[f.name] = value
        return {**out, **self.unknown}

    def __post_init__(self) -> None:
        if not isinstance(self.config, dict) or not self.task:
            raise DataError(f"{self.path or 'record'}: a run record needs its configuration and task")

    def write(self, path: Path) -> None:
        write_text_atomic(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")

    # ---- what the run was, decided once ---------------------------------------------------------
    @functools.cached_property
    def _typed(self) -> tuple:
        from .run_config import stored_run

        try:
            return stored_run(self.config, self.task)
        except ConfigError:
            if self.composed:
                raise
        kept: dict = {}  # a hand-made configuration: its groups that read as today's settings
        for key, value in self.config.items():
            try:
                stored_run({**kept, key: value}, self.task)
                kept[key] = value
            except ConfigError:
                continue
        return stored_run(kept, self.task)

    def made_from(self, run: RunConfig) -> Record:
        """This record with ``run``, the runner's own typed configuration, as its typed form: a record the
        runner writes is never parsed back from the plain data it stores (``config``, ``plain(run)``)."""
        self.__dict__["_typed"] = (run, ())
        return self

    @property
    def run(self) -> RunConfig:
        """The configuration in its typed form (``run_config.stored_run``), read once: every default, today's
        and a changed one's earlier value, comes from the settings classes. A record without a composed
        configuration (``composed``) reads as its groups that are today's settings, the rest as defaults."""
        return self._typed[0]

    @property
    def settings_since_removed(self) -> tuple[str, ...]:
        """Keys of the stored configuration that no settings class declares today (left out of ``run``)."""
        return self._typed[1]

    @property
    def file_hashes(self) -> dict[str, str]:
        """The SHA-256 of each file setting the run read, by dotted key (its identity's ``files_sha256``)."""
        return (self.identity or {}).get("files_sha256") or {}

    @property
    def data_hashes(self) -> dict[str, str]:
        """The SHA-256 of each data file the run read, by split (its identity's ``data_sha256``)."""
        return (self.identity or {}).get("data_sha256") or {}

    @property
    def composed(self) -> bool:
        """Whether the record holds the configuration Hydra composed (``config.task.name``); a hand-made one
        (the report tests') holds only some keys, and its own fields say what the run was."""
        return "name" in (self.config.get("task") or {})

    @property
    def is_probe(self) -> bool:
        return self.task.startswith("probe_")

    @property
    def position(self) -> str | None:
        return self.elmo_position

    @property
    def uses_encoder(self) -> bool:
        """Whether the run read contextual layers (ELMo somewhere, a probe, a biLM fine-tuning): the one
        rule, ``run_config.reads_layers``, on the record's configuration."""
        from .run_config import reads_layers

        if not self.config:
            return self.elmo_position != "none"
        return reads_layers(self.run.task.name, self.run.mode, self.run.position)

    @property
    def seed(self) -> Any:
        return self.run.seed if "seed" in self.config else None

    @property
    def value(self) -> float | None:
        """The dev metric the tables report."""
        return self.dev.get(self.metric) if isinstance(self.dev, dict) and self.metric else None

    @property
    def test_value(self) -> float | None:
        return self.test.get(self.metric) if isinstance(self.test, dict) and self.metric else None

    @property
    def fraction(self) -> float:
        return getattr(self.run.data, "fraction", 1.0)  # a probe's data shape has none: all of its set

    @property
    def equal_updates(self) -> bool:
        return self.run.trainer.equal_updates

    @property
    def bilm_sha256(self) -> str | None:
        """The biLM the record depends on (the base biLM of a fine-tuned one); None without ELMo."""
        if self.identity is not None:
            return self.identity.get("bilm_sha256")
        return None if self.elmo_position == "none" else (self.bilm or {}).get("sha256")

    @property
    def encoder(self) -> str | None:
        """A Transformer run's model, '<directory or hub name> (<SHA-256 prefix>, <pooling>)'; None
        for the biLM."""
        sha = (self.identity or {}).get("encoder_sha256")
        if not sha:
            return None
        model = str((self.transformer or self.bilm or {}).get("model", "?")).rstrip("/")
        name = "embedded small BERT" if model.endswith("bert_core/pretrained/small") else Path(model).name or model
        pooling = getattr(self.run.encoder, "pooling", "first")  # a Transformer's setting
        return (
            f"{name} ({sha[:12]}, {pooling} piece)"
            if pooling == "first"
            else f"{name} ({sha[:12]}, {pooling} of pieces)"
        )

    @property
    def encoder_kind(self) -> str:
        return self.run.encoder.kind

    @property
    def variant(self) -> str:
        """What sets the run apart from its ablation's plain form (reported in ``variants.md``): a
        biLM state policy other than stateless, a fine-tuned biLM (§3.4), a Transformer's layers."""
        if not self.uses_encoder:
            return ""
        state, tuned = getattr(self.run.encoder, "state", "stateless"), getattr(self.run.encoder, "finetune", False)
        parts = [f"state={state}"] if state != "stateless" else []
        parts += ["finetuned biLM"] if tuned else []
        return ",".join(parts + (["encoder=transformer"] if self.encoder else []))

    @property
    def base_setting(self) -> str:
        """The ablation: the Hydra choice the run was made with, else (runs made without one) what
        its ELMo settings amount to."""
        if self.ablation:
            return self.ablation
        if self.elmo_position == "none":
            return "baseline"
        elmo = self.run.elmo
        if self.elmo_position == self.run.task.elmo_position and elmo.mix == "all":
            return "elmo"
        return f"{self.elmo_position}/{elmo.mix}/l2={elmo.l2}"

    @property
    def setting(self) -> str:
        return self.base_setting + (f"+{self.variant}" if self.variant else "")

    @property
    def choices(self) -> tuple[str, ...]:
        """The Hydra choices the run was made with: task, data source, profile, a data set chosen by name,
        ablation, encoder kind."""
        data, task = self.run.data, self.run.task.name
        local = bool(data.dir or any(getattr(data, f"{s}_path", None) for s in ("train", "dev", "test")))
        source = ("sample" if reads_the_sample(task, data.dir) else "local") if local else "hf"
        out = [f"task={task}", f"source={source}"]
        out += [f"profile={self.profile}"] if self.profile else []
        out += [f"data={self.data_set}"] if self.data_set else []
        out += [f"+ablation={self.ablation}"] if self.ablation else []
        return tuple(out + ([f"encoder={self.encoder_kind}"] if self.encoder_kind != "bilm" else []))

    def digest(self) -> str | None:
        """The run's identity digest, recomputed from its configuration and identity; the stored one where
        today's settings cannot describe its configuration (a key since removed)."""
        from .plan import record_digest

        return record_digest(self.to_dict()) or self.config_hash


def reads_the_sample(task: str, folder: str | None) -> bool:
    """Whether ``folder`` is the checkout's sample of ``task`` (``sources.sample`` of its task file)."""
    from .config_store import CONF

    sample = _sample_folder(task)
    return folder is not None and sample is not None and sample == (CONF.parent / folder).resolve()


@functools.cache
def _sample_folder(task: str) -> Path | None:
    """The checkout's sample folder of ``task``, read once per process (None: no sample, or no such task)."""
    from .config_store import CONF, task_file

    try:
        sample = task_file(task).sources.get("sample")
    except ConfigError:  # a task not in this checkout
        return None
    return None if sample is None or sample.get("dir") is None else (CONF.parent / sample.dir).resolve()
