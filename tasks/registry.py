"""Which code runs a configuration's ``task.name`` (Peters et al. 2018 §4 tasks, §5.3 probes), found by
the suite's layout rather than a list: adding a task touches its folder and its ``conf/task/<name>.yaml`` only.

* A task ``<name>`` is the one ``Task`` subclass in ``tasks/<name>/task.py`` (``conf/task/<name>.yaml``
  gives its data and profiles; ``experiments.config_store`` registers them).
  A layer probe trained by the trainer is a task like any other (``tasks/probe_pos/``).
* A probe with nothing to train (``probe_wsd``: 1-nearest-neighbour on sense centroids, the paper's
  method) is the function ``run_<kind>_probe`` in ``tasks/probes/<kind>.py``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import Path

from suite_common.errors import ConfigError

ROOT = Path(__file__).resolve().parent
DEFAULT_TASK = "ner"  # what run.py runs without task= (conf/config.yaml's default; make demo's task)


def available() -> list[str]:
    tasks = sorted(p.parent.name for p in ROOT.glob("*/task.py"))
    probes = sorted(f"probe_{p.stem}" for p in (ROOT / "probes").glob("*.py") if p.stem != "__init__")
    return tasks + probes


def _unknown(name: str) -> ConfigError:
    return ConfigError(f"unknown task {name!r} (available: {', '.join(available())})")


def task_class(name: str) -> type:
    """The ``Task`` subclass of ``tasks/<name>/task.py``."""
    if not isinstance(name, str) or name not in available():  # a plain folder name, never a path
        raise _unknown(name)
    if not (ROOT / name / "task.py").is_file():
        if is_probe_function(name):  # known, but not a Task: saying "unknown" while listing it contradicts itself
            raise ConfigError(
                f"task {name!r} is a probe with nothing to train (tasks/probes/{name.removeprefix('probe_')}.py): "
                "it has no Task class; run.py runs it through probe_function"
            )
        raise _unknown(name)
    return _task_class_in(name)


@functools.cache
def _task_class_in(name: str) -> type:
    """The one ``Task`` subclass of ``tasks/<name>/task.py``, looked up once per process."""
    from .base import Task  # the task contract loads torch and datasets; finding tasks needs neither

    module = importlib.import_module(f"tasks.{name}.task")
    found = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, Task) and c is not Task and c.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise ConfigError(f"tasks/{name}/task.py must define exactly one Task subclass (found {len(found)})")
    return found[0]


def is_probe_function(name: str) -> bool:
    """Whether ``name`` runs as a probe function (``tasks/probes/<kind>.py``) rather than a task."""
    return name.startswith("probe_") and (ROOT / "probes" / f"{name.removeprefix('probe_')}.py").is_file()


def probe_function(name: str) -> Callable:
    """``run_<kind>_probe`` of ``tasks/probes/<kind>.py`` for ``probe_<kind>``."""
    kind = name.removeprefix("probe_")
    if not name.startswith("probe_") or not (ROOT / "probes" / f"{kind}.py").is_file():
        raise _unknown(name)
    module = importlib.import_module(f"tasks.probes.{kind}")
    if not hasattr(module, f"run_{kind}_probe"):
        raise ConfigError(f"tasks/probes/{kind}.py must define run_{kind}_probe")
    return getattr(module, f"run_{kind}_probe")


def table_tasks() -> list[str]:
    """The tasks of the task tables (the probes apart), in the paper's Table 1 order; a task without a Table 1
    row (``paper.py``) after them, by name. Table 1's sweep runs them (``conf/sweep/table1.yaml``)."""

    def order(name: str) -> tuple:
        row = getattr(paper_reference(name), "row", None)
        return (row is None, row or 0, name)

    return sorted((n for n in available() if not n.startswith("probe_")), key=order)


def paper_reference(name: str):
    """What the paper reports for ``name`` (``tasks.common.paper_reference.PaperReference``): the
    ``REFERENCE`` of ``tasks/<name>/paper.py``, or of a probe function's module; None when it declares none."""
    if is_probe_function(name):
        module = importlib.import_module(f"tasks.probes.{name.removeprefix('probe_')}")
    elif name in available() and (ROOT / name / "paper.py").is_file():
        module = importlib.import_module(f"tasks.{name}.paper")
    elif name in available():
        return None
    else:
        raise _unknown(name)
    return getattr(module, "REFERENCE", None)


def sweep_tasks(sweep: str) -> list[str]:
    """The tasks a quick sweep runs besides Table 1's (``conf/sweep/<sweep>.yaml``): those whose reference names
    it in ``sweeps`` (``tasks/<name>/paper.py``), in Table 1's order."""
    return [n for n in table_tasks() if sweep in getattr(paper_reference(n), "sweeps", ())]
