"""What one launch of ``run.py`` is, resolved once before anything runs (Peters et al. 2018 §3.3-3.4: where
ELMo goes and which frozen encoder feeds it; §5.3 for the probes): the kind of run, the encoder, the record it
writes, and its identity: everything that can change its result and nothing else (the paper's experiments are
compared cell by cell, so a cell must hold one configuration's runs only). Each field of the typed run declares
whether it counts (``counted_config``); every file a run reads counts by its content, hashed in one walk with
the task code's version (``make_identity``). A record's digest is recomputed from its stored configuration and
identity (``record_digest``). The recipes in ``runner`` follow the plan.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from operator import attrgetter

from encoders import Encoder, encoder_for
from suite_common.errors import ConfigError
from suite_common.hashing import content_sha256, sha256_hex
from suite_common.typed_config import counted, file_settings, file_value, plain
from tasks.common.data_files import data_files
from tasks.registry import is_probe_function, task_class

from .run_config import RunConfig, as_run

PROBE_VERSION = 1  # raise when a probe function's code changes its results (part of its records' identity)


def make_identity(run: RunConfig, encoder, files: dict | None = None) -> dict:
    """The run's identity: the content hash of its data (``files``: its data files, worked out once by the plan)
    and of every file setting that counts in it (an encoder's through the encoder, which resolves the embedded
    default, presets and downloads), each under the name its field gives, and its task code's version."""
    files = data_files(plain(run.data)) if files is None else files
    data = {k: content_sha256(p) for k, p in files.items()}
    name = run.task.name  # the VERSION its task registered; the probe functions share PROBE_VERSION
    version = PROBE_VERSION if is_probe_function(name) else task_class(name).VERSION
    identity = {"bilm_sha256": None, "data_sha256": data, "task_version": version}
    for path, f in file_settings(run, run).items():
        group, name = path.split(".", 1)
        if group == "encoder" and name not in encoder.file_hashes():
            raise ConfigError(f"{path}: the {encoder.kind} encoder does not hash this file")
        value = file_value(owner(run, path), f)
        digest = encoder.file_hashes()[name] if group == "encoder" else None if value is None else content_sha256(value)
        if not f.metadata.get("in_config"):
            identity[f.metadata["hash_name"]] = digest
        elif value is not None:
            identity.setdefault("files_sha256", {})[path] = digest
    if "encoder_sha256" in identity:  # a Transformer run names no biLM
        del identity["bilm_sha256"]
    return identity


def owner(run: RunConfig, path: str):
    """The group that holds the setting at dotted ``path`` (the run itself for a top-level one)."""
    parent = path.rpartition(".")[0]
    return attrgetter(parent)(run) if parent else run


def config_file_hashes(run: RunConfig) -> dict[str, str]:
    """The content hash of each file setting that stands in the counted configuration by its hash (such as
    ``task.model.vectors``), as ``make_identity`` records it under ``files_sha256``; a file not here is
    ``missing``."""
    out = {}
    for path, f in file_settings(run, run).items():
        value = file_value(owner(run, path), f)
        if f.metadata.get("in_config") and value is not None:
            try:
                out[path] = content_sha256(value)
            except OSError:
                out[path] = "missing"
    return out


def counted_config(run: RunConfig, hashes: dict[str, str]) -> dict:
    """What of the configuration decides the run's result, with ``elmo.position`` spelled out."""
    out = counted(run, run, hashes)
    if "elmo" in out and run.position:
        out["elmo"] = {**out["elmo"], "position": run.position}
    out = {k: v for k, v in out.items() if v or k not in ("data", "encoder", "cache")}  # as no group: nothing counts
    if "encoder" in out:  # the kind always names the encoder a run reads
        out["encoder"] = {"kind": run.encoder.kind, **out["encoder"]}
    return out


def run_digest(run: RunConfig | dict, identity: dict) -> str:
    """The digest of a run (typed, or a plain mapping as records store it) with its ``identity``."""
    counted = counted_config(as_run(run), (identity or {}).get("files_sha256") or {})
    return sha256_hex(json.dumps({**counted, "identity": identity}, sort_keys=True))[:16]


def record_digest(record: dict) -> str | None:
    """A stored record's digest; None without an identity, or when today's settings cannot describe its
    configuration (a key since removed): no run configured today is that run."""
    identity, config = record.get("identity"), record.get("config")
    if identity is None or not isinstance(config, dict):
        return None
    try:
        return run_digest(config, identity)
    except ConfigError:
        return None


@dataclass(frozen=True)
class RunPlan:
    run: RunConfig  # the configuration, typed (every group; ``run_config``)
    kind: str  # "task" | "probe" | "finetune"
    identity: dict  # what the run's files hold, and the code's version
    digest: str
    record_name: str  # results.json | finetune.json
    finetuned_encoder: bool  # ELMo read from the biLM fine-tuned on the task's text (§3.4, encoder.finetune)
    encoder: Encoder  # the encoder the configuration names (``encoders.encoder_for``)
    data_files: dict = field(default_factory=dict)  # split -> the local file it reads (none from the hub)

    @classmethod
    def resolve(cls, run: RunConfig | dict, finetune: bool = False) -> RunPlan:
        """The plan of ``run`` (typed, or a record's plain mapping). ``finetune``: the biLM fine-tuning of
        ``mode=finetune`` (Table 7), recorded in ``finetune.json``."""
        run = as_run(run)
        encoder = encoder_for(run)
        kind = "finetune" if finetune else "probe" if is_probe_function(run.task.name) else "task"
        files = data_files(plain(run.data))
        identity = make_identity(run, encoder, files)
        if run.reads_encoder and encoder.kind == "bilm" and (finetune or run.encoder.finetune):
            identity["finetune_seed"] = int(run.encoder.finetune_seed)  # one made before seeding is another run
        return cls(
            run=run,
            encoder=encoder,
            kind=kind,
            identity=identity,
            digest=run_digest(run, identity),
            record_name="finetune.json" if kind == "finetune" else "results.json",
            finetuned_encoder=encoder.kind == "bilm" and bool(run.encoder.finetune) and run.position != "none",
            data_files=files,
        )

    @property
    def resolved(self) -> dict:
        """The typed run as plain data, every setting written out: what records store and re-parse."""
        return plain(self.run)
