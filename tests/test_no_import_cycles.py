"""No import cycle anywhere in the repository: module-level and function-level imports between the
suite's modules (elmo_core, bert_core, tasks, benchmarks, run.py) form an acyclic graph."""
import ast

from conftest import REPO

PACKAGES = ("elmo_core", "bert_core", "tasks", "benchmarks")


def modules() -> dict:
    out = {"run": REPO / "run.py"}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported(name: str, path, known: dict) -> set:
    """The suite's modules that ``name`` imports anywhere in its file."""
    out = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != name:
                out.add(target)
    return out


def test_no_import_cycle_anywhere():
    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert "tasks.runner" in graph["tasks.record_migration"]  # the scan sees relative imports

    def path_back(start, node, seen):
        for nxt in sorted(graph[node]):
            if nxt == start:
                return [node, nxt]
            if nxt not in seen:
                rest = path_back(start, nxt, seen | {nxt})
                if rest:
                    return [node, *rest]
        return None
    cycles = [" -> ".join(c) for m in sorted(graph) if (c := path_back(m, m, {m}))]
    assert cycles == []
