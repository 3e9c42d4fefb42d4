"""Which run records may share a table cell (Peters et al. 2018, Tables 1-3 and Figure 1 report one
configuration per cell, over seeds).

A cell is (profile, biLM, task, setting), and the report averages its records over seeds. A record
belongs in a cell only when its configuration is exactly what its profile, task, data source and
ablation prescribe, as ``conf/`` composes them now: any other override (``trainer.max_epochs=1`` in a
debugging run, a learning rate being tried, another ELMo dropout) makes it an *extra*, listed apart
in ``extras.md`` with the keys that differ, never averaged in. So does a run that read other data
(the content hashes of its identity against the files its choices read now). Keys that the report itself separates
are allowed to vary: the seed, the training fraction of Figure 1 (``data.fraction``,
``trainer.equal_updates``), and the biLM variants of ``variants.md`` (state policy, fine-tuning).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
from functools import cache
from pathlib import Path

from omegaconf import OmegaConf

from experiments.plan import config_file_hashes, counted_config
from experiments.record import Record
from experiments.rescoring import rescoring_differences
from experiments.run_config import RunConfig, as_run, non_counting_keys, placement, reads_layers
from suite_common.errors import ConfigError
from suite_common.hashing import content_sha256
from tasks.common.data_files import data_files

from .per_record import per_record
from .record_evidence import evidence_differences

CONF = Path(__file__).resolve().parents[1] / "conf"
RUNTIME_KEYS = [f.name for f in dataclasses.fields(RunConfig) if not f.metadata["counts"]]  # mode, device, ...
VARYING = (
    "seed",
    "data.fraction",
    "trainer.equal_updates",
    "encoder.state",
    "encoder.warmup_batches",
    "encoder.finetune",
    "encoder.finetune_epochs",
    "encoder.finetune_seed",
)


def flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def composed(choices: tuple[str, ...]) -> dict:
    """The configuration these choices compose to today (resolved, plain), from ``CONF`` with the
    environment's ``ELMO_SHARED`` (both part of the memo's key, so a changed one is never answered from it)."""
    return _composed(CONF, os.environ.get("ELMO_SHARED"), choices)


@cache
def _composed(conf_dir: Path, shared: str | None, choices: tuple[str, ...]) -> dict:
    """A run's seed is one top-level value that nothing in ``conf/`` reads: the seeds of one configuration
    share one composition (a table's cells hold three seeds), with the seed set in a copy of it."""
    from experiments.config_store import compose

    seeds = [c for c in choices if c.startswith("seed=")]
    if len(seeds) == 1 and re.fullmatch(r"0|[1-9][0-9]{0,9}", seeds[0][5:]):  # Hydra reads it as this int
        config = copy.deepcopy(_composed(conf_dir, shared, tuple(c for c in choices if c != seeds[0])))
        config["seed"] = int(seeds[0][5:])
        return config
    return OmegaConf.to_container(compose(choices, conf_dir), resolve=True)


def prescribed(choices: tuple[str, ...]) -> dict:
    """The flattened, comparable configuration these choices compose to today (a file that stands in it by
    its content, such as the word vectors, hashed as it is now)."""
    return _prescribed(CONF, os.environ.get("ELMO_SHARED"), Path.cwd(), choices)


@cache
def _prescribed(conf_dir: Path, shared: str | None, cwd: Path, choices: tuple[str, ...]) -> dict:
    config = _composed(conf_dir, shared, choices)
    try:
        hashes = config_file_hashes(as_run(config))
    except ConfigError:
        hashes = {}
    return settings(config, hashes)


def _prescribed_run(choices: tuple[str, ...]) -> RunConfig | None:
    try:
        return as_run(_composed(CONF, os.environ.get("ELMO_SHARED"), choices))
    except ConfigError:
        return None


def _value(flat_settings: dict, run: RunConfig | None, key: str):
    """``key``'s value in a configuration's counted settings, or where they leave it out (a setting added
    after the records, at its default) the value its typed form holds: what the run used, not None."""
    if key in flat_settings or run is None:
        return flat_settings.get(key)
    value = run
    for part in key.split("."):
        value = getattr(value, part, None)
    return value


def prescribed_data(choices: tuple[str, ...]) -> dict[str, str]:
    """split -> SHA-256 of the data file these choices read now (``missing`` where it is not here). The
    data paths may be relative (``../shared`` by default), so the working directory is part of the memo's key."""
    return _prescribed_data(CONF, os.environ.get("ELMO_SHARED"), Path.cwd(), choices)


@cache
def _prescribed_data(conf_dir: Path, shared: str | None, cwd: Path, choices: tuple[str, ...]) -> dict[str, str]:
    data = _composed(conf_dir, shared, choices).get("data") or {}
    return {split: content_sha256(cwd / path) for split, path in data_files(data).items()}


def settings(config: dict, file_hashes: dict[str, str]) -> dict:
    """A configuration's settings that count in a run's identity, flattened and named as ``conf/``
    names them today (its typed form: a setting it does not hold has its default); a file that stands in
    it by its content as ``sha256:<file_hashes[key]>``. A configuration today's settings cannot describe
    (a key since removed) is compared by its own keys."""
    try:
        run = as_run(config)
    except ConfigError:
        return described_by_own_keys(config)
    return flat({**counted_config(run, file_hashes), "identity": {}})


@per_record
def record_settings(r: Record) -> dict:
    """``settings`` of a record's configuration, read from its typed form, its files hashed as its identity
    recorded them; one with a setting since removed is compared by its own keys."""
    if r.settings_since_removed:
        return described_by_own_keys(r.config)
    return flat({**counted_config(r.run, r.file_hashes), "identity": {}})


def described_by_own_keys(config: dict) -> dict:
    """The settings of a configuration with a key no field declares any more: its own keys, less those
    that never count (``settings.non_counting_keys``), the encoder only where ELMo is read, and
    ``elmo.position`` spelled out."""
    out = {k: v for k, v in config.items() if k not in RUNTIME_KEYS}
    encoder, task = out.pop("encoder", None) or {}, out.get("task") or {}
    position = placement((out.get("elmo") or {}).get("position"), task.get("elmo_position"))
    if reads_layers(task.get("name", ""), out.get("mode"), position):
        out["encoder"] = {"kind": encoder.get("kind", "bilm"), **encoder}
    if isinstance(out.get("elmo"), dict) and position:
        out["elmo"] = {**out["elmo"], "position": position}
    skip = set(non_counting_keys())
    return {k: v for k, v in flat({**out, "identity": {}}).items() if k not in skip}


def history_differences(r: Record) -> dict[str, tuple]:
    """A record whose dev metric is not its best epoch's (a hand-edited number contradicts the record's own
    epoch history) is never averaged in."""
    epochs, best, metric = r.epochs or [], r.best_epoch, r.metric
    if not (epochs and best and metric and isinstance(r.value, (int, float))):
        return {}
    logged = next((e.get(f"dev_{metric}") for e in epochs if e.get("epoch") == best), None)
    if isinstance(logged, (int, float)) and abs(logged - r.value) > 1e-3:  # the history keeps 4 decimals
        return {f"dev.{metric} (against epoch {best} of its history)": (r.value, logged)}
    return {}


@per_record
def data_differences(r: Record) -> dict[str, tuple]:
    """The data files whose content a record's run read differently from what its choices read now
    (another ``data.train_path``, an edited file): such a run never joins the cell, whatever its
    directory's name says. Files not here now cannot be compared and count as the same."""
    ran = r.data_hashes
    wanted = prescribed_data(r.choices)
    return {
        f"data.{split} (file content)": (sha[:12], wanted[split][:12])
        for split, sha in sorted(ran.items())
        if wanted.get(split, "missing") != "missing" and sha != wanted[split]
    }


@per_record
def differences(r: Record, accepted: tuple[str, ...] = (), choices: tuple[str, ...] | None = None) -> dict[str, tuple]:
    """``key -> (what the run used, what its profile prescribes)`` for every key that sets it apart
    (but ``accepted`` keys, or keys below an accepted prefix such as ``task.model``);
    empty when the record may join its cell. ``choices``: the cell's choices (default: the ones the
    record was made with). Every record first shows its own evidence (``record_evidence``); one
    without a composed configuration (no ``config.task.name``, dated before run.py's records kept their
    evidence, e.g. the report tests' hand-made records) has no configuration to compare beyond that."""
    evidence = evidence_differences(r)
    if not r.composed or "task" in evidence:  # nothing more can be read of it
        return evidence
    try:
        wanted = prescribed(choices or r.choices)
    except Exception as e:  # a task, profile or ablation that no longer exists
        return {**evidence, "(configuration)": (" ".join(r.choices), f"does not compose now: {type(e).__name__}")}
    ran = record_settings(r)
    unread = (
        () if r.uses_encoder else ("elmo.", "encoder.", "cache.")
    )  # a baseline reads no encoder: its settings do not matter
    keys = sorted(
        k
        for k in set(ran) | set(wanted)
        if not k.startswith(("identity", *unread))
        and k not in VARYING
        and ran.get(k) != wanted.get(k)
        and not _accepted(k, accepted)
    )
    data = {
        k: v
        for k, v in data_differences(r).items()  # other data files on purpose: --accept data.<split>_file
        if not any(
            a in ("data", "data.dir", f"data.{k.split()[0][5:]}_file", f"data.{k.split()[0][5:]}_path")
            for a in accepted
        )
    }
    ran_run = None if r.settings_since_removed else r.run
    wanted_run = _prescribed_run(choices or r.choices) if keys else None  # once a record, and only when it differs
    return {
        **evidence,
        **{k: (_value(ran, ran_run, k), _value(wanted, wanted_run, k)) for k in keys},
        **data,
        **history_differences(r),
        **rescoring_differences(r),
    }


ABLATIONS = tuple(sorted(p.stem for p in (CONF / "ablation").glob("*.yaml")))


def cell_settings(r: Record, accepted: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The cells (ablations) a record fills. A run launched as an ablation (``+ablation=X``) fills X when
    its configuration is X's (``accepted`` keys aside), and every other ablation whose configuration it
    also is (Table 1's 'elmo' is Table 2's 'λ=0.001' and, for NER, Table 3's 'input'), so that a reused
    run needs no second record; a run launched without one fills every ablation whose composed
    configuration it is exactly, however its command spelled it (``elmo.position=both``, the demo's run,
    is Table 3's input-and-output cell). Empty: the run belongs to no cell (an extra)."""
    if evidence_differences(r):
        return ()
    if not r.composed:
        return (r.base_setting,)
    if r.ablation:  # its own cell, and every other ablation whose configuration it is (no alias record needed)
        if differences(r, accepted):
            return ()
        own = tuple(c for c in r.choices if not c.startswith("+ablation="))
        return (r.ablation, *(name for name in ABLATIONS if name != r.ablation and fills(r, own, name, accepted)))
    matched = [name for name in ABLATIONS if fills(r, r.choices, name, accepted)]
    if not matched and not differences(r, accepted):
        matched.append(r.base_setting)  # a configuration of no ablation (the profile's own), as before
    return tuple(matched)


def fills(r: Record, choices: tuple[str, ...], ablation: str, accepted: tuple[str, ...]) -> bool:
    """Whether the record's run is exactly the configuration ``choices`` compose with ``+ablation``."""
    wanted = (*choices, f"+ablation={ablation}")
    config = composed(wanted)
    position = placement(config["elmo"]["position"], config["task"]["elmo_position"])
    return position == r.elmo_position and not differences(r, accepted, wanted)


def variant(r: Record, accepted: tuple[str, ...] = ()) -> str:
    """What sets a run apart from the biLM use its profile prescribes (``variants.md``), so that it is
    never averaged into the plain cell: a state policy other than the profile's, a biLM fine-tuned on the
    task's text (§3.4) where the profile reads the base one, or the base one where the profile fine-tunes
    (``profile=paper`` for SQuAD and SNLI), a Transformer's layers. Records not made by ``run.py`` (no
    composed configuration) keep the record's own rule (``Record.variant``). A key the report accepts
    (``--accept encoder.state``) sets no run apart."""
    if not r.uses_encoder or not r.composed:
        return r.variant
    try:
        wanted = prescribed(r.choices)
    except Exception:  # a task, profile or ablation that no longer exists: the record's own rule
        return r.variant
    ran = record_settings(r)
    parts = []
    state = ran.get("encoder.state") or "stateless"
    if state != (wanted.get("encoder.state") or "stateless") and not _accepted("encoder.state", accepted):
        parts.append(f"state={state}")
    tuned = bool(ran.get("encoder.finetune"))
    if tuned != bool(wanted.get("encoder.finetune")) and not _accepted("encoder.finetune", accepted):
        parts.append("finetuned biLM" if tuned else "base biLM (not fine-tuned)")
    return ",".join(parts + (["encoder=transformer"] if r.encoder else []))


def _accepted(key: str, accepted: tuple[str, ...]) -> bool:
    return any(key == a or key.startswith(f"{a}.") for a in accepted)


def describe(diff: dict[str, tuple]) -> str:
    return ", ".join(f"{k}={ran!r} (prescribed {want!r})" for k, (ran, want) in diff.items())


def check_accepted(keys: tuple[str, ...]) -> None:
    """``--accept`` keys must name a setting (or a group of settings, such as ``task.model``) that some
    task's configuration has; an unknown key stops the report with the nearest valid ones."""
    import difflib

    from suite_common.errors import ConfigError

    if not keys:
        return
    known: set[str] = set()
    for task in sorted(p.stem for p in (CONF / "task").glob("*.yaml")):
        for key in flat(composed((f"task={task}", "source=local"))):
            parts = key.split(".")
            known.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    for key in keys:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(known), n=3) or sorted(k for k in known if "." not in k)
            raise ConfigError(f"--accept {key}: no such setting; did you mean {', '.join(near)}?")
