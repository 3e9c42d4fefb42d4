"""Every command-line override names something a run can use, checked before Hydra starts a run (Peters et
al. 2018's settings live in ``conf/``). Hydra would accept a misspelt ``+key=value`` and train with the
default in force. ``check_overrides`` checks each group option against ``conf/`` and the ConfigStore, then
composes every job of the command with its keys force-added and builds its typed run: the first problem is
one ``ConfigError`` line naming the key and the nearest valid one. ``hydra.*`` overrides are left to Hydra.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from omegaconf import OmegaConf

from suite_common.errors import ConfigError
from suite_common.typed_config import nearest

from .config_store import CONF, compose, register
from .run_config import TASK_FILE_SECTIONS, as_run

MAX_CHECKED_JOBS = 1000  # a larger sweep has its later jobs checked as each one starts
# settings that left elmo.* for the encoder and cache groups: an old command is told their new names
_BILM_KEYS = "options weights allow_extra_weights state warmup_batches batch_size finetune finetune_epochs"
RENAMED = {f"elmo.{k}": f"encoder.{k}" for k in _BILM_KEYS.split()} | {
    f"elmo.cache{old}": f"cache.{new}"
    for old, new in (("", "enabled"), ("_dir", "dir"), ("_dtype", "dtype"), ("_max_gb", "max_gb"))
}


def config_groups(conf: Path = CONF) -> dict[str, list[str]]:
    """Group name -> its options, as Hydra lists them (the YAML files of ``conf/<group>/`` and the ConfigStore)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    register(conf)
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        return {group: loader.get_group_options(group) for group in loader.list_groups("") if group != "hydra"}


def parse(args: list[str]):
    """The overrides among command-line arguments (flags such as ``-m`` or ``--cfg job`` are skipped)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    texts = [a for a in args if ("=" in a and not a.startswith("-")) or a.startswith("~")]
    try:
        return OverridesParser.create().parse_overrides(texts)
    except OverrideParseException as e:
        pinned = [t for t in texts if "#" in t.partition("=")[2] or "$" in t.partition("=")[2]]
        key, _, value = pinned[0].partition("=") if pinned else ("", "", "")
        hint = f"""; {key}: quote a value holding # or $ for Hydra, as in '{key}="{value}"'""" if pinned else ""
        raise ConfigError(f"cannot read the overrides: {str(e).splitlines()[0]}{hint}") from None


def check_overrides(args: list[str], conf: Path = CONF) -> None:
    """Raise ``ConfigError`` (one line) for the first override a run cannot use, in any job of the command."""
    groups, axes, deleted = config_groups(conf), [], []
    for o in parse(args):
        key, values = o.key_or_group, _values(o)
        if key == "hydra" or key.startswith(("hydra.", "hydra/")):
            continue
        if key in RENAMED:
            raise ConfigError(f"{key} is now {RENAMED[key]} (the encoder's and the cache's settings left elmo.*); "
                              f"write {RENAMED[key]}={','.join(values) or '...'}; nothing was run")  # fmt: skip
        if key.split(".")[0] == "task" and key.split(".")[1:2] and key.split(".")[1] in TASK_FILE_SECTIONS:
            section = key.split(".")[1]
            raise ConfigError(f"{key}: conf/task/<task>.yaml's {section} are read when composing, not settings; "
                              "set the key itself (data.dir=...); nothing was run")  # fmt: skip
        if o.is_delete():
            axes.append([o.input_line]) if key in groups else deleted.append(key)
            continue
        if key in groups:
            for option in (v for v in values if v not in groups[key]):
                raise ConfigError(f"{key}={option}: no such {key}{nearest(option, groups[key])}; "
                                  f"choices: {', '.join(groups[key])}")  # fmt: skip
            prefix = "+" if o.is_add() else "++" if o.is_force_add() else ""
        else:
            prefix = "++"  # an unknown key is added, so that the typed run names it with the nearest known one
        single = o.input_line.lstrip("+~") if not o.is_sweep_override() else None
        axes.append([f"{prefix}{single}"] if single else [f"{prefix}{key}={v}" for v in values])
    if {"-m", "--multirun"} & set(args):
        axes += sweeper_axes(axes, conf)
    for job in itertools.islice(itertools.product(*axes), MAX_CHECKED_JOBS):
        cfg = compose(job, conf)
        swept = " ".join(j.lstrip("+") for j, axis in zip(job, axes) if len(axis) > 1)
        where = f" (sweep job {swept})" if swept else ""
        for key in deleted:
            if OmegaConf.select(cfg, key, default=KeyError) is KeyError:
                parent, _, leaf = key.rpartition(".")
                node = OmegaConf.select(cfg, parent) if parent else cfg
                known = list(node.keys()) if OmegaConf.is_dict(node) else []
                raise ConfigError(f"~{key}: no such setting{nearest(leaf, known)}{where}; nothing was run")
        try:
            as_run(cfg)
        except ConfigError as e:
            raise ConfigError(f"{e}{where}; nothing was run") from None


def sweeper_axes(axes: list[list[str]], conf: Path = CONF) -> list[list[str]]:
    """The axes of a sweep config's ``hydra.sweeper.params`` (coref_cv's folds) the command line leaves."""
    params = compose([axis[0] for axis in axes], conf, hydra_config=True).hydra.sweeper.get("params") or {}
    given = {axis[0].partition("=")[0].lstrip("+~") for axis in axes}  # the command line wins, as in Hydra
    return [
        [f"{k}={v}" for v in _values(parse([f"{k}={value}"])[0])]
        for k, value in params.items()
        if k.lstrip("+") not in given
    ]


def _values(override) -> list[str]:
    if override.is_sweep_override():
        return [str(v) for v in override.sweep_string_iterator()]
    return [] if override.value() is None else [str(override.value())]
