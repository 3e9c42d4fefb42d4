"""The command line, read once before Hydra starts a run (Peters et al. 2018's settings live in ``conf/``).

``prepare(argv)`` gives the arguments ``hydra.main`` reads: the overrides first (so that any placement of ``-m``,
``--cfg job``, ``--info`` means the same), and ``source=local`` added where the hub cannot be reached and the
local copies are there. It raises ``ConfigError`` (one line) for the first problem, before Hydra makes anything:
two Hydra commands at once; ``hydra.job.chdir``; an override no run can use (Hydra would accept a misspelt
``+key=value`` and train with the default in force: every job of the command is composed and its typed run
built); an output folder that is empty, a file, unwritable, the root or a system folder; a file to read that is
not a readable regular file. The overrides are parsed once, by Hydra's public ``OverridesParser``, and that one
reading is handed to every check; Hydra's own flags are read through ``experiments.hydra_adapter``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf

from suite_common.errors import ConfigError
from suite_common.typed_config import nearest

from .config_store import CONF, compose, config_groups
from .hydra_adapter import hydra_flags
from .run_config import TASK_FILE_SECTIONS, as_run

HYDRAS_OWN = {"--hydra-help", "-sc", "--shell-completion"}  # flags whose command composes no run of the suite's
MAX_CHECKED_JOBS = 1000  # a larger sweep has its later jobs checked as each one starts
# settings that left elmo.* for the encoder and cache groups: an old command is told their new names
_BILM_KEYS = "options weights allow_extra_weights state warmup_batches batch_size finetune finetune_epochs"
RENAMED = {f"elmo.{k}": f"encoder.{k}" for k in _BILM_KEYS.split()} | {
    f"elmo.cache{old}": f"cache.{new}"
    for old, new in (("", "enabled"), ("_dir", "dir"), ("_dtype", "dtype"), ("_max_gb", "max_gb"))
}
OUTPUT_KEYS = ("runs_root", "embed_sample.out", "hydra.run.dir", "hydra.sweep.dir")  # folders Hydra makes first
FILES_READ = ("encoder.options", "encoder.weights", "task.model.vectors", "data.train_path", "data.dev_path",
              "data.test_path")  # fmt: skip
DATA_MODES = ("train", "dry_run", "finetune")


@dataclass(frozen=True)
class CommandLine:
    """One command line as read once: ``argv`` (overrides first), its overrides as Hydra's ``Override``
    objects, and Hydra's own flags (None where Hydra's parser refuses the line: its error says why)."""

    argv: list[str]
    overrides: list
    flags: argparse.Namespace | None

    def given(self, key: str) -> str | None:
        """The text after ``=`` of the last override of ``key`` (``+``/``++`` aside), None if none sets it."""
        for o in reversed(self.overrides):
            if o.key_or_group == key and not o.is_delete():
                return o.input_line.partition("=")[2]
        return None

    @property
    def keys(self) -> set[str]:
        return {o.key_or_group for o in self.overrides}

    @property
    def multirun(self) -> bool:
        return bool(self.flags.multirun) if self.flags else bool({"-m", "--multirun"} & set(self.argv))


def parse_overrides(args: list[str]) -> list:
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


def read(argv: list[str]) -> CommandLine:
    """``argv`` read once: overrides first, parsed; ``ConfigError`` if an override cannot be read."""
    argv = overrides_first(argv)
    return CommandLine(argv, parse_overrides(argv), hydra_flags(argv))


def prepare(argv: list[str], reachable=None) -> list[str]:
    """The arguments for ``hydra.main``, every check passed (``ConfigError`` for the first that fails)."""
    if HYDRAS_OWN & set(argv):  # Hydra's help or shell completion: no run, its words are not overrides
        return list(argv)
    line = choose_data_source(read(argv), reachable)
    check_one_command(line)
    check_no_chdir(line)
    check_overrides(line)
    check_output_folders(line)
    check_files_given(line)
    return line.argv


def overrides_first(argv: list[str]) -> list[str]:
    """``argv`` with the overrides first, in their order, then Hydra's flags in theirs. Hydra's parser reads the
    overrides as one run of positional arguments, so ``task=T --cfg job seed=1`` (or an override the suite adds
    in front of ``-m``) is refused there; read intermixed, every placement of ``-m``, ``--cfg job``, ``-cn NAME``,
    ``--info``, ... means the same. Arguments Hydra's parser refuses anyway are left to its error."""
    argv = list(argv)
    for k, arg in enumerate(argv[:-1]):  # --info's topic is optional: an override after it is no topic
        if arg in ("--info", "-i") and "=" in argv[k + 1]:
            argv = [*argv[:k], *argv[k + 1 :], arg]
            break
    flags = hydra_flags(argv)
    if flags is None:
        return argv
    rest = list(argv)
    for override in flags.overrides:
        rest.remove(override)
    return [*flags.overrides, *rest]


def choose_data_source(line: CommandLine, reachable=None) -> CommandLine:
    """``source=`` left out of a run that reads task data: the Hugging Face hub when it can be reached
    (``source=hf``), else the local copies under ``$ELMO_SHARED/data`` (default ``../shared/data``) when they are
    there (``source=local``, added to the line); one line says which. Either way the record names the data by its
    content, so the report keeps the two apart."""
    mode = line.given("mode")
    if (
        "source" in line.keys
        or (mode is not None and mode not in DATA_MODES)
        or any(k == "data" or k.startswith("data.") for k in line.keys)  # a data set chosen or placed by the user
    ):
        return line
    if reachable is None:
        from tasks.common.hub import hub_reachable

        reachable = lambda: os.environ.get("HF_HUB_OFFLINE") not in ("1", "true", "True") and hub_reachable(2.0)  # noqa: E731
    shared = Path(os.environ.get("ELMO_SHARED", "../shared")) / "data"
    if reachable():
        print("data: the Hugging Face hub (source=hf; source=local reads the local copies)", file=sys.stderr)
        return line
    if not shared.is_dir():
        return line  # neither: the hub's own error says what to do
    print(
        f"data: the local copies under {shared} (source=local; the Hugging Face hub cannot be reached)", file=sys.stderr
    )
    argv = ["source=local", *line.argv]  # the overrides come first
    return CommandLine(argv, [*parse_overrides(["source=local"]), *line.overrides], hydra_flags(argv))


def check_one_command(line: CommandLine) -> None:
    """Hydra runs one command at a time (``--run``, ``-m``, ``--cfg``, ``--info``, ``--shell-completion``); two of
    them (``-m --cfg job``) are one line here instead of the ValueError it raises before its own error handling."""
    args = line.flags
    if args is None:
        return  # Hydra's parser says what is wrong
    commands = {"--run (-r)": args.run, "--multirun (-m)": args.multirun, "--cfg (-c)": args.cfg is not None,
                "--info (-i)": args.info is not None, "--shell-completion (-sc)": args.shell_completion}  # fmt: skip
    given = [name for name, on in commands.items() if on]
    if len(given) > 1:
        hint = "; to see a sweep job's configuration, run --cfg job with that job's values" if args.multirun else ""
        raise ConfigError(f"{' and '.join(given)} together: Hydra runs one of {', '.join(commands)} per command"
                          f"{hint}; nothing was run")  # fmt: skip


def check_no_chdir(line: CommandLine) -> None:
    """``hydra.job.chdir=true`` would start each job inside its own run directory, where the relative paths of the
    command line and the defaults (``runs_root``, ``../shared``, the cache) no longer lead where they were typed:
    refused in one line. The suite names its directories itself; a job never needs to change into one."""
    value = line.given("hydra.job.chdir")
    if value is not None and value.strip().lower() not in ("false", "no", "0", "null", ""):
        raise ConfigError(f"hydra.job.chdir={value}: the suite runs every job from the directory it was started in "
                          "(its run directories are named by runs_root=, its relative paths read from there); leave "
                          "hydra.job.chdir out; nothing was run")  # fmt: skip


def check_overrides(line: CommandLine, conf: Path = CONF) -> None:
    """``ConfigError`` (one line) for the first override a run cannot use, in any job of the command: each group
    option against ``conf/`` and the ConfigStore, then every job composed with its keys force-added and its typed
    run built, naming the key and the nearest valid one. ``hydra.*`` overrides are left to Hydra."""
    groups, axes, deleted = config_groups(conf), [], []
    for o in line.overrides:
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
    if line.multirun:
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
    """The axes of a sweep config's ``hydra.sweeper.params`` (cross_validation's folds) the command line leaves."""
    params = compose([axis[0] for axis in axes], conf, hydra_config=True).hydra.sweeper.get("params") or {}
    given = {axis[0].partition("=")[0].lstrip("+~") for axis in axes}  # the command line wins, as in Hydra
    return [
        [f"{k}={v}" for v in _values(parse_overrides([f"{k}={value}"])[0])]
        for k, value in params.items()
        if k.lstrip("+") not in given
    ]


def _values(override) -> list[str]:
    if override.is_sweep_override():
        return [str(v) for v in override.sweep_string_iterator()]
    return [] if override.value() is None else [str(override.value())]


def check_output_folders(line: CommandLine) -> None:
    """``runs_root`` (command line, ``ELMO_RUNS_ROOT`` or ``outputs/runs``), ``embed_sample.out`` and Hydra's run
    and sweep folders, the directories Hydra creates before the run starts, must be usable: not empty
    (``runs_root=`` would put the runs at the file system's root), not the root or a system folder, not a file,
    and writable, which is tried by making and removing a directory in the nearest one that exists (a read-only or
    virtual file system such as /proc refuses it)."""
    from suite_common.output_paths import forbidden_output
    from suite_common.typed_config import blank_path

    env = os.environ.get("ELMO_RUNS_ROOT")
    given = {key: line.given(key) for key in OUTPUT_KEYS if line.given(key) is not None}
    roots = {"runs_root": given.get("runs_root", env if env is not None else "outputs/runs")}
    roots.update({k: v for k, v in given.items() if k != "runs_root" and "${" not in v})
    for key, text in roots.items():
        shown = f"{key}={text}" if key in given or env is None else f"ELMO_RUNS_ROOT={text!r}"
        if blank_path(text):
            raise ConfigError(f"{shown}: {blank_path(text)}; nothing was run")
        if forbidden_output(text):
            raise ConfigError(f"{shown}: {forbidden_output(text)}; choose a folder of your own; nothing was run")
        existing = Path(text)
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.exists() and not existing.is_dir():
            raise ConfigError(f"{shown}: {existing} is a file, not a directory; choose another {key}=")
        try:
            Path(tempfile.mkdtemp(prefix=".write-check-", dir=existing)).rmdir()
        except OSError as e:
            ro = existing.exists() and os.statvfs(existing).f_flag & os.ST_RDONLY
            why = "read-only file system" if ro else (e.strerror or type(e).__name__).lower()
            raise ConfigError(f"{shown}: {existing} cannot be written ({why}); choose another {key}=") from None


def check_files_given(line: CommandLine) -> None:
    """Every file a run reads that the command line names must be a readable regular file, checked before Hydra
    makes the run's directory: a wrong ``encoder.weights=`` (the original file is ``weights.hdf5``, bilm-tf's
    ``lm_weights.hdf5``) is one line that names the ``.hdf5`` files beside it, not a traceback."""
    from suite_common.bounded_files import data_file_problem
    from suite_common.remote_files import is_url

    for o in line.overrides:
        key, value = o.key_or_group, o.input_line.partition("=")[2]
        if key not in FILES_READ or o.is_delete() or o.is_sweep_override() or "${" in value:
            continue
        if value in ("", "null", "None", "shipped") or is_url(value):
            continue
        problem = data_file_problem(value)
        if problem:
            folder = Path(value).parent
            near = sorted(p.name for p in folder.glob("*.hdf5")) if key == "encoder.weights" and folder.is_dir() else []
            hint = f"; {folder} holds {', '.join(near)}" if near else ""
            raise ConfigError(f"{key}={value}: {problem}{hint}; nothing was run")
