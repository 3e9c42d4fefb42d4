"""The task heads that have a reference to run beside: every registered task whose folder holds a
``conformance.py`` (``tasks/common/conformance.py`` says what one holds), in the registry's order."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from tasks.registry import available

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def heads() -> dict[str, ModuleType]:
    """Task name -> its ``tasks/<name>/conformance.py`` (``prepare``, ``reference_config``, ``TITLE``,
    ``REFERENCE_MODEL``, ``PACKAGE``, ``METRIC``)."""
    return {
        name: importlib.import_module(f"tasks.{name}.conformance")
        for name in available()
        if (TASKS / name / "conformance.py").is_file()
    }
