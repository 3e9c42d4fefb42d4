"""docs/layout.md names every module of the suite, and no module that is gone."""

import os
import re
from pathlib import Path

from conftest import REPO

PACKAGES = (
    "suite_common",
    "elmo_core",
    "bert_core",
    "static_vectors",
    "encoders",
    "tasks",
    "experiments",
    "reporting",
    "benchmarks",
)
LAYOUT = REPO / "docs" / "layout.md"


def rows() -> list[str]:
    """The list's items (a top-level item with its nested ones), each as one line."""
    items: list[str] = []
    for line in LAYOUT.read_text().splitlines():
        if line.startswith("- "):
            items.append(line)
        elif items and line.startswith(" "):
            items[-1] += " " + line.strip()
    return items


def modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name != "__init__.py":
                yield path.relative_to(REPO).as_posix()


def named(rel: str, table: list[str]) -> bool:
    package, *middle, name = rel.split("/")
    stem = name.removesuffix(".py")
    folders = ["/".join([package, *middle[: i + 1]]) + "/" for i in range(len(middle))]
    if package == "tasks" and middle and middle[0] not in ("common",):
        folders.append("tasks/<name>/")  # every task folder: reader, model, metric, task, config
    for row in table:
        if f"`{rel}`" in row or any(f"`{folder}`" in row for folder in folders):
            return True
        in_package = f"`{package}/" in row or f"**`{package}/`**" in row
        if in_package and re.search(rf"`(?:[\w/]*/)?{re.escape(stem)}(?:\.py)?`", row):
            return True
    return False


def test_every_module_is_named_in_docs_layout():
    table = rows()
    missing = [rel for rel in modules() if not named(rel, table)]
    assert missing == [], f"docs/layout.md does not name: {missing}"


def test_every_module_path_in_docs_layout_exists():
    text = LAYOUT.read_text()
    gone = []
    alternatives = "|".join(PACKAGES)
    for path in re.findall(rf"`((?:{alternatives})/[\w/<>.]+)`", text):
        if "<" in path:
            continue
        if not (REPO / path).exists():
            gone.append(path)
    assert gone == [], f"docs/layout.md names paths that do not exist: {gone}"


def _exists(reference: str) -> bool:
    """``pkg/a/b.py``, ``pkg/a/``, or ``pkg.a.b[.name]``: the module (or package) is there."""
    if "/" in reference:
        return (REPO / reference).exists()
    parts = reference.split(".")
    for n in range(len(parts), 0, -1):  # the longest prefix that is a module or package; the rest a name in it
        base = REPO.joinpath(*parts[:n])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            return n == len(parts) or re.search(rf"\b{parts[n]}\b", module.read_text()) is not None
    return False


def test_no_comment_or_document_names_a_module_that_is_gone():
    alternatives = "|".join(PACKAGES)
    pattern = re.compile(rf"`((?:{alternatives})(?:/\w+)+(?:\.py|/)|(?:{alternatives})(?:\.[a-z_]+)+)`")
    stale = []
    files = []
    for root, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]  # .venv*, .git, caches
        files += [Path(root) / n for n in names if n.endswith((".py", ".md", ".yaml"))]
    for path in files:
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(("results/history/", "results/CHANGES.md")):  # dated: names of their day
            continue
        for reference in pattern.findall(path.read_text(errors="replace")):
            if not reference.endswith(".md") and not _exists(reference):  # results/encoders.md: a file
                stale.append(f"{rel}: {reference}")
    assert stale == [], stale
