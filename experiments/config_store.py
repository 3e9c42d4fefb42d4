"""The base of every composed configuration, in Hydra's ConfigStore (Peters et al. 2018 §3-4 and appendix A
settings, as the typed groups declare them), so that no YAML file repeats a default: ``run_defaults`` (the
top level) and each group's defaults (``GROUP_DEFAULTS``); ``task_defaults/<name>``, under the task's file
``conf/task/<name>.yaml``; ``data/<name>_<source>`` (the data group's defaults, then the task file's ``data``
and ``sources.<source>``); ``task_profile/<name>_<profile>_<encoder>`` (the file's ``profiles.<profile>``, as it
applies with that encoder kind: ``for_encoder``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from encoders.config import BilmConfig, CacheConfig, TransformerConfig
from suite_common.errors import ConfigError
from suite_common.typed_config import plain
from tasks.common.config import ElmoConfig, TrainerConfig

from .run_config import ENCODERS, TASK_FILE_SECTIONS, RunConfig, data_config_class, run_dir_excludes, task_config_class

CONF = Path(__file__).resolve().parents[1] / "conf"
GROUP_DEFAULTS = {
    ("trainer", "default"): TrainerConfig,
    ("elmo", "default"): ElmoConfig,
    ("encoder", "bilm"): BilmConfig,
    ("encoder", "transformer"): TransformerConfig,
    ("cache", "default"): CacheConfig,
}


def _copies_share_the_store(store: ConfigStore, memo: dict) -> ConfigStore:
    """Hydra copies its config repository at every composition (``CachingConfigRepository``), and with it the
    ConfigStore its structured source holds: every registered node, a fifth of a composition's time. The store
    hands out a copy of each node it loads (``ConfigStore.load``) and composing never writes to it, so a copy
    of the repository can share the one store."""
    return store


ConfigStore.__deepcopy__ = _copies_share_the_store


def task_file(name: str, conf: Path = CONF) -> DictConfig:
    """``conf/task/<name>.yaml`` as written (interpolations kept); ``ConfigError`` names a missing or bad file."""
    path = conf / "task" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"task {name!r} has its folder tasks/{name}/ but no {path} (its settings, data and profiles)")
    try:
        node = OmegaConf.load(path)
    except Exception as e:  # YAML's own errors (a scanner's, a parser's) carry the line
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: cannot be read as YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(node, DictConfig):
        raise ConfigError(f"{path}: must be a mapping (the task's settings and its data, sources and profiles)")
    for section in TASK_FILE_SECTIONS:
        if node.get(section) is None:
            node[section] = {}
        if not isinstance(node[section], DictConfig):
            raise ConfigError(f"{path}: {section} must be a mapping of settings, not {node[section]!r}")
    return node


_REGISTERED: list = [None]  # what the store holds now: the conf directory and its task files' sizes and times


def register(conf: Path = CONF) -> None:
    """Put every base node into Hydra's ConfigStore (registering the same task files again is skipped)."""
    from tasks.registry import available, sweep_tasks, table_tasks

    files = sorted((conf / "task").glob("*.yaml"))
    key = (conf, tuple(available()), tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files))
    if _REGISTERED[0] == key:
        return
    _REGISTERED[0] = None  # a registration stopped half way is none
    from .hydra_dirs import mode_dir, run_dir_name, sweep_dir

    resolvers = {"run_dir_excludes": run_dir_excludes, "table1_tasks": lambda: ",".join(table_tasks()),
                 "sweep_tasks": lambda sweep: ",".join(sweep_tasks(sweep)),
                 "run_dir_name": run_dir_name, "mode_dir": mode_dir, "sweep_dir": sweep_dir}  # fmt: skip
    for name, resolver in resolvers.items():  # the resolvers conf/config.yaml and the sweep files name
        OmegaConf.register_new_resolver(name, resolver, replace=True)
    store = ConfigStore.instance()
    chosen = ("task", "data", "elmo", "encoder", "cache", "trainer", "source")  # the groups chosen in conf/
    store.store(name="run_defaults", node={k: v for k, v in plain(RunConfig()).items() if k not in chosen})
    for (group, name), cls in GROUP_DEFAULTS.items():
        store.store(group=group, name=name, node=plain(cls(), base=True))
    sources = sorted(p.stem for p in (conf / "source").glob("*.yaml"))
    for path in files:  # a task file of no task folder (yet) is still read by Hydra: it is checked the same way
        if path.stem not in available():
            task_file(path.stem, conf)
    for name in available():
        spec = task_file(name, conf)
        store.store(group="task_defaults", name=name, node={**plain(task_config_class(name)()), "name": name})
        data = OmegaConf.merge(plain(data_config_class(name)()), spec.data)
        for source in sources:  # the sample's files are the checkout's, wherever run.py runs
            node = OmegaConf.merge(data, spec.sources.get(source) or {})
            if source == "sample" and node.get("dir") and not Path(node.dir).is_absolute():
                node.dir = str(conf.parent / node.dir)
            store.store(group="data", name=f"{name}_{source}", node=node)
        for profile, node in spec.profiles.items():
            for kind in ENCODERS:
                store.store(group="task_profile", name=f"{name}_{profile}_{kind}", node=for_encoder(node, kind),
                            package="_global_")  # fmt: skip
    _REGISTERED[0] = key


def for_encoder(profile: Mapping, kind: str) -> DictConfig:
    """A task profile as it applies with encoder ``kind``: its ``encoder`` settings that only another kind declares
    (a biLM's state policy under ``encoder=transformer``) left out; a key no kind declares stays, to be refused."""
    encoder = profile.get("encoder")
    if not encoder:
        return OmegaConf.create(profile)
    own = {f.name for f in dataclasses.fields(ENCODERS[kind])}
    others = {f.name for cls in ENCODERS.values() for f in dataclasses.fields(cls)} - own
    return OmegaConf.merge({k: v for k, v in profile.items() if k != "encoder"},
                           {"encoder": {k: v for k, v in encoder.items() if k not in others}})  # fmt: skip


def compose(overrides=(), conf: Path = CONF, hydra_config: bool = False) -> DictConfig:
    """The configuration ``run.py`` would compose for ``overrides`` (registered first)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    register(conf)
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides), return_hydra_config=hydra_config)


def config_groups(conf: Path = CONF) -> dict[str, list[str]]:
    """Group name -> its options, as Hydra lists them (the YAML files of ``conf/<group>/`` and the ConfigStore)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    register(conf)
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        return {group: loader.get_group_options(group) for group in loader.list_groups("") if group != "hydra"}
