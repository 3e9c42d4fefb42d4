"""Every command-line override names something that exists, checked before Hydra starts a run.

Hydra accepts ``+key=value`` for any key, so a misspelt setting (``+elmo.positon=both``) would be
added to the configuration and trained on silently with the default in force, and it reports an
unknown key or group option as several lines with exit code 1. ``check_overrides`` instead stops the
command with one ``ConfigError`` line that names the key (or option) and the nearest valid one:

* a config group's option (``task=nre``, ``+ablation=inptu``) must be a file ``conf/<group>/<option>.yaml``;
* every other key (with or without ``+``, ``++`` or ``~``) must be a key of the configuration those
  groups compose (for a sweep over tasks, of each task's configuration);
* a key of the earlier layout (``elmo.state``, ``elmo.cache_dtype``, ...) names its new key.

``hydra.*`` and ``hydra/...`` overrides are Hydra's own and are left to it.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf

from suite_common.errors import ConfigError

from .run_config import TASK_FILE_SECTIONS

# names the encoder's and the cache's settings had under elmo.* until November 2026: on the command line
# they stop the command with one line naming the key that replaced them
_BILM_KEYS = (
    "options",
    "weights",
    "allow_extra_weights",
    "state",
    "warmup_batches",
    "batch_size",
    "finetune",
    "finetune_epochs",
)
_CACHE_KEYS = {"cache": "enabled", "cache_dir": "dir", "cache_dtype": "dtype", "cache_max_gb": "max_gb"}
RENAMED = {
    **{f"elmo.{k}": f"encoder.{k}" for k in _BILM_KEYS},
    **{f"elmo.{k}": f"cache.{v}" for k, v in _CACHE_KEYS.items()},
}

CONF = Path(__file__).resolve().parents[1] / "conf"


def config_groups(conf: Path = CONF) -> dict[str, list[str]]:
    """Group name -> its options (the YAML files of ``conf/<group>/`` and the ConfigStore's nodes)."""
    from .config_store import register, registered_groups

    register(conf)
    groups = {d.name: sorted(p.stem for p in d.glob("*.yaml")) for d in sorted(conf.iterdir()) if d.is_dir()}
    for group, options in registered_groups().items():
        groups[group] = sorted({*groups.get(group, []), *options})
    return groups


def dotted_keys(node, prefix: str = "") -> set[str]:
    """Every key of a configuration, dotted (``elmo.position``), intermediate nodes included."""
    keys = set()
    if isinstance(node, DictConfig):
        for k in node.keys():
            path = f"{prefix}{k}"
            keys.add(path)
            child = node._get_node(k)
            if isinstance(child, (DictConfig, ListConfig)) and not child._is_missing() and not child._is_none():
                keys |= dotted_keys(child, f"{path}.") if isinstance(child, DictConfig) else set()
    return keys


def nearest(word: str, candidates) -> str:
    match = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def parse(args: list[str]):
    """The overrides among command-line arguments (flags such as ``-m`` or ``--cfg job`` are skipped)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    texts = [a for a in args if ("=" in a and not a.startswith("-")) or a.startswith("~")]
    try:
        return OverridesParser.create().parse_overrides(texts)
    except OverrideParseException as e:
        unquoted = [t for t in texts if "=" in t and any(c in t.split("=", 1)[1] for c in "#$'\"") and not
                    t.split("=", 1)[1].startswith(("'", '"'))]  # fmt: skip
        hint = (
            f"; {unquoted[0].split('=', 1)[0]}: quote a value holding # or $ for Hydra, as in "
            f"""'{unquoted[0].split("=", 1)[0]}="{unquoted[0].split("=", 1)[1]}"'"""
            if unquoted
            else ""
        )
        raise ConfigError(f"cannot read the overrides: {str(e).splitlines()[0]}{hint}") from None


def values(override) -> list[str]:
    if override.is_sweep_override():
        return [str(v) for v in override.sweep_string_iterator()]
    value = override.value()
    return [] if value is None else [str(value)]


def check_overrides(args: list[str], conf: Path = CONF, config_name: str = "config") -> None:
    """Raise ``ConfigError`` (one line) for the first override whose key or group option does not exist."""
    groups = config_groups(conf)
    group_overrides, key_overrides = [], []
    for o in parse(args):
        key = o.key_or_group
        if key == "hydra" or key.startswith(("hydra.", "hydra/")):
            continue
        if key in RENAMED:
            shown = ",".join(values(o)) or "..."
            raise ConfigError(
                f"{key} is now {RENAMED[key]} (the encoder's and the cache's settings left elmo.*); "
                f"write {RENAMED[key]}={shown}; nothing was run"
            )
        if key.split(".")[:2] in [["task", s] for s in TASK_FILE_SECTIONS]:
            raise ConfigError(
                f"{key}: conf/task/<task>.yaml's {key.split('.')[1]} are read when the configuration is composed, "
                "not settings; set the key itself (data.dir=..., trainer.max_epochs=...); nothing was run"
            )
        if key in groups:
            for option in values(o):
                if option not in groups[key]:
                    raise ConfigError(
                        f"{key}={option}: no such {key}{nearest(option, groups[key])}; "
                        f"choices: {', '.join(groups[key])}"
                    )
            group_overrides.append(o)
        else:
            key_overrides.append(o)
    check_keys(group_overrides, key_overrides, conf, config_name)
    check_sweep_values(group_overrides + key_overrides, conf, config_name)


def check_keys(group_overrides: list, key_overrides: list, conf: Path, config_name: str) -> None:
    """Every key override names a key of the configuration each swept task or encoder composes to."""
    if not key_overrides:
        return
    from hydra import compose, initialize_config_dir

    swept = [
        o for o in group_overrides if o.key_or_group in ("task", "encoder")
    ]  # groups whose option changes the keys
    fixed = [first_choice(o) for o in group_overrides if o not in swept]
    combinations = [[]]
    for o in swept:
        prefix = "+" if o.is_add() else ""
        combinations = [[*c, f"{prefix}{o.key_or_group}={v}"] for c in combinations for v in values(o)]
    for chosen in combinations:
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            cfg = compose(config_name, overrides=fixed + chosen)
        known = dotted_keys(cfg)
        for o in key_overrides:
            if o.key_or_group not in known:
                where = f" for {' '.join(c.lstrip('+') for c in chosen)}" if chosen and len(combinations) > 1 else ""
                hint = encoder_hint(o.key_or_group, cfg) or nearest(o.key_or_group, known)
                raise ConfigError(
                    f"unknown key {o.key_or_group!r}{where}{hint}; nothing was run "
                    f"(python run.py --cfg job lists every key)"
                )


MAX_CHECKED_JOBS = 1000


def check_sweep_values(overrides: list, conf: Path = CONF, config_name: str = "config") -> None:
    """A sweep (``-m a=1,2 b=x,y``) has every job's configuration composed and its values validated
    (``config_schema``) before the first job starts: a bad value in the last job stops the sweep
    before anything trains. Up to ``MAX_CHECKED_JOBS`` jobs; larger sweeps are checked per job."""
    import itertools

    from hydra import compose, initialize_config_dir

    from .config_schema import validate

    if not any(o.is_sweep_override() for o in overrides):
        return
    axes = []
    for o in overrides:
        prefix = "+" if o.is_add() else ("++" if o.is_force_add() else "")
        axes.append([f"{prefix}{o.key_or_group}={v}" for v in values(o)] if o.is_sweep_override() else [o.input_line])
    jobs = list(itertools.islice(itertools.product(*axes), MAX_CHECKED_JOBS + 1))
    if len(jobs) > MAX_CHECKED_JOBS:
        return
    for job in jobs:
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            cfg = compose(config_name, overrides=list(job))
        try:
            validate(cfg)
        except ConfigError as e:
            swept = " ".join(j.lstrip("+") for j, axis in zip(job, axes) if len(axis) > 1)
            raise ConfigError(f"{e} (sweep job {swept}); nothing was run") from None


def encoder_hint(key: str, cfg) -> str:
    """Why an ``encoder.*`` key is unknown with ``encoder=transformer``: the biLM settings exist for the biLM only."""
    if key.startswith("encoder.") and OmegaConf.select(cfg, "encoder.kind") == "transformer":
        return " (a biLM setting: encoder=transformer has none; its files are encoder.model)"
    return ""


def first_choice(o) -> str:
    """A group override with the first of its sweep values (the keys do not depend on which)."""
    prefix = "+" if o.is_add() else ("++" if o.is_force_add() else "")
    return f"{prefix}{o.key_or_group}={values(o)[0]}" if values(o) else o.input_line
