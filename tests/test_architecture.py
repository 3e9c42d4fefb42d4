"""The repository's shape, read from its source with ``ast``: no import cycle anywhere, each
cross-cutting decision defined in one place, and ``elmo_core`` needing only torch, numpy and h5py."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = (
    "elmo_core",
    "bert_core",
    "static_vectors",
    "encoders",
    "tasks",
    "experiments",
    "benchmarks",
    "reporting",
    "suite_common",
)


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for the top-level scripts and every module of ``packages``."""
    files = list(root.glob("*.py")) + [p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))]
    out = {}
    for path in files:
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported_modules(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The repository modules that ``name`` imports, at any depth of its code (function-level
    imports included: they form cycles just the same, only later)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def import_cycles(root: Path, packages=PACKAGES) -> list[list[str]]:
    """Every strongly connected group of more than one module in the import graph (Tarjan)."""
    known = module_files(root, packages)
    graph = {name: imported_modules(name, path, known) for name, path in known.items()}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle_anywhere_in_the_repository():
    assert import_cycles(REPO) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import f\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg.a import g\n")
    (tmp_path / "pkg" / "c.py").write_text("from . import a\n")
    assert import_cycles(tmp_path, packages=("pkg",)) == [["pkg.a", "pkg.b"]]


def definitions(pattern: str) -> list[str]:
    """``file:line`` of every line of the repository's Python that matches ``pattern``."""
    hits = []
    for path in module_files(REPO).values():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(pattern, line):
                hits.append(f"{path.relative_to(REPO)}:{number}")
    return hits


def test_each_cross_cutting_decision_is_defined_once():
    # where ELMo goes, whether a run reads an encoder, what counts in a run's identity (the typed fields'
    # declarations and the one walk over them), the names settings had before
    for pattern in (
        r"^def placement\(",
        r"^def reads_layers\(",
        r"^def counted\(",
        r"^def make_identity\(",
        r"^def run_digest\(",
        r"^def record_digest\(",
        r"^class RunConfig\b",
        r"^class Record\b",
        r"^class RunPlan\b",
        r"^RENAMED\s*=",
    ):
        assert len(definitions(pattern)) == 1, (pattern, definitions(pattern))
    # nobody else spells out what position=paper means
    assert [hit.split(":")[0] for hit in definitions(r"""position\W*\s*==\s*["']paper""")] == [
        "experiments/run_config.py"
    ]


def test_elmo_core_needs_only_torch_numpy_h5py_and_the_shared_module():
    allowed = {"torch", "numpy", "h5py", "tqdm", "elmo_core", "suite_common", "__future__"}
    stdlib = set(sys.stdlib_module_names)
    for path in sorted((REPO / "elmo_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = [node.module.split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in allowed or root in stdlib, f"{path.relative_to(REPO)} imports {root}"


def test_the_shared_module_imports_nothing_of_the_suite():
    for path in sorted((REPO / "suite_common").rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
        assert not any(name.split(".")[0] in PACKAGES[:-1] for name in names), path


def test_every_path_in_the_layout_table_exists():
    text = (REPO / "docs" / "layout.md").read_text()
    cells = re.findall(r"^- \**`([^`]+)`", text, flags=re.M)  # each item opens with the path it is about
    assert len(cells) > 20
    for cell in cells:
        first = cell.split(",")[0].strip().replace("<name>", "ner")
        assert (REPO / first).exists(), f"docs/layout.md names {first}, which is not in the repository"


def test_tasks_know_nothing_of_the_run_machinery():
    """``tasks/`` (the contract and the task folders) imports nothing of ``experiments/`` (how runs go)."""
    for path in sorted((REPO / "tasks").rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
        assert not any(name.split(".")[0] == "experiments" for name in names), path


def test_tasks_top_level_holds_only_the_contract_and_the_registry():
    """Everything else in ``tasks/`` is a task folder or what the folders share (``tasks/common/``)."""
    assert sorted(p.name for p in (REPO / "tasks").glob("*.py")) == ["__init__.py", "base.py", "registry.py"]
    for folder in sorted(p for p in (REPO / "tasks").iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "__init__.py").is_file(), f"tasks/{folder.name} is not a package"


MAX_FUNCTION_LINES = 80


def syntax_nodes(root: Path):
    """``(module name, node)`` for every node of every module of the scripts and packages."""
    for name, path in module_files(root).items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            yield name, node


def long_functions(root: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Every function or method of the scripts and packages longer than ``limit`` lines (its
    decorators excluded, its docstring included), as ``module:name (lines)``."""
    found = []
    for name, node in syntax_nodes(root):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append(f"{name}:{node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_80_lines():
    assert long_functions(REPO) == []


def test_the_length_check_finds_a_long_function(tmp_path):
    (tmp_path / "elmo_core").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "elmo_core" / "long.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}")
    assert long_functions(tmp_path) == [f"elmo_core.long:long ({MAX_FUNCTION_LINES + 1} lines)"]


def config_classes(root: Path) -> dict[str, tuple[set[str], set[str]]]:
    """Every dataclass named ``*Config`` or ``*Settings`` in the packages: its declared field names and the
    names of its bases."""
    found = {}
    for name, node in syntax_nodes(root):
        if isinstance(node, ast.ClassDef) and node.name.endswith(("Config", "Settings")):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if any(d.split("(")[0].endswith("dataclass") for d in decorators):
                fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and hasattr(s.target, "id")}
                found[f"{name}.{node.name}"] = (fields, {ast.unparse(b).split(".")[-1] for b in node.bases})
    return found


def duplicated_config_classes(root: Path, share: float = 0.75) -> list[str]:
    """Pairs of configuration classes where one declares again most (``share``) of the other's fields (at
    least three): a second copy of one configuration group. Subclasses of one base (each task's settings
    over ``TaskConfig``) give their own values to the fields they inherit: they are not copies."""
    classes = config_classes(root)
    found = []
    for a, (fields_a, bases_a) in classes.items():
        for b, (fields_b, bases_b) in classes.items():
            common = fields_a & fields_b
            related = bases_a & bases_b or a.split(".")[-1] in bases_b or b.split(".")[-1] in bases_a
            if a != b and not related and len(fields_a) >= 3 and len(common) >= share * len(fields_a):
                found.append(f"{a} repeats {len(common)} of its {len(fields_a)} fields in {b}")
    return found


def test_no_configuration_class_is_a_second_copy_of_another():
    assert duplicated_config_classes(REPO) == []


def test_the_copy_check_finds_a_settings_class_repeating_a_config(tmp_path):
    (tmp_path / "encoders").mkdir()
    first = "@dataclass\nclass CacheConfig:\n    enabled: bool = True\n    dir: str = 'x'\n    dtype: str = 'f'\n"
    second = (
        "@dataclass(frozen=True)\nclass CacheSettings:\n    enabled: bool\n    dir: str\n    dtype: str\n    n: int\n"
    )
    (tmp_path / "encoders" / "a.py").write_text(first + "\n\n" + second)
    assert duplicated_config_classes(tmp_path) == [
        "encoders.a.CacheConfig repeats 3 of its 3 fields in encoders.a.CacheSettings",
        "encoders.a.CacheSettings repeats 3 of its 4 fields in encoders.a.CacheConfig",
    ]


# The edge: a composed configuration (Hydra's DictConfig) becomes the typed run here, and only here; Hydra's
# sweep callback is called by Hydra with its own configuration.
DICTCONFIG_EDGE = {"experiments.run_config:as_run"}
HYDRA_CALLBACKS = {"experiments.sweep_total:on_job_end", "experiments.sweep_total:on_multirun_end"}
BELOW_THE_ENTRY_POINTS = (
    "experiments",
    "encoders",
    "tasks",
    "elmo_core",
    "bert_core",
    "static_vectors",
    "suite_common",
)


def dictconfig_receivers(root: Path) -> list[str]:
    """Every function of the packages below the entry points with a parameter annotated ``DictConfig``, but the
    edge's converters and Hydra's callbacks."""
    found = []
    for name, node in syntax_nodes(root):
        if name.split(".")[0] in BELOW_THE_ENTRY_POINTS and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any(a.annotation is not None and "DictConfig" in ast.unparse(a.annotation) for a in arguments):
                if f"{name}:{node.name}" not in DICTCONFIG_EDGE | HYDRA_CALLBACKS:
                    found.append(f"{name}:{node.name}")
    return found


def test_nothing_below_the_entry_points_receives_a_composed_configuration():
    assert dictconfig_receivers(REPO) == []


def test_every_mode_takes_the_typed_run():
    """``run.py``'s modes: the first parameter of each is the typed run (``RunConfig``), never the composed one."""
    import inspect

    from experiments import runner, trained_runs
    from experiments.dry_run import dry_run
    from experiments.embed_sample import embed_sample
    from experiments.predictor import predict_mode

    for mode in (runner.train, runner.finetune, trained_runs.evaluate, dry_run, predict_mode, embed_sample):
        first = next(iter(inspect.signature(mode).parameters.values()))
        assert first.name == "run" and "DictConfig" not in str(first.annotation), mode.__qualname__


def test_the_receiver_check_finds_a_function_taking_a_dictconfig(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "a.py").write_text("def build(cfg: DictConfig, n: int):\n    return n\n")
    assert dictconfig_receivers(tmp_path) == ["tasks.a:build"]


def test_no_task_is_named_outside_tasks_in_the_sweeps_the_run_machinery_and_the_cost_model():
    """A task's name lives in its folder (``tasks/<name>/``, its ``paper.py`` lists the sweeps it joins) and its
    ``conf/task/<name>.yaml``; the sweeps, the run machinery, ``run.py`` and the cost model find tasks through the
    registry."""
    import re

    from tasks.registry import available

    names = re.compile(r"\b(" + "|".join(map(re.escape, available())) + r")\b")
    places = [*(REPO / "conf" / "sweep").glob("*.yaml"), *(REPO / "experiments").glob("*.py"), REPO / "run.py",
              REPO / "benchmarks" / "paper_scale.py"]  # fmt: skip
    found = [
        f"{p.relative_to(REPO)}:{k}: {line.strip()}"
        for p in places
        for k, line in enumerate(p.read_text().splitlines(), 1)
        if names.search(line)
    ]
    assert found == []


def test_each_tasks_sample_lives_in_its_task_folder_and_nowhere_else():
    """One home for samples: a task file's ``sources.sample.dir`` is a folder below ``tasks/`` holding the files
    it names, and ``tests/fixtures`` holds none of them."""
    import yaml

    named = []
    for path in sorted((REPO / "conf" / "task").glob("*.yaml")):
        sample = (yaml.safe_load(path.read_text()).get("sources") or {}).get("sample") or {}
        folder = REPO / sample["dir"]
        assert sample["dir"].startswith("tasks/") and folder.name == "sample" and folder.is_dir(), path
        files = [sample[k] for k in ("train_file", "dev_file") if sample.get(k)] or [
            f"{w}.pos" for w in sample["words"]
        ]
        assert all((folder / f).is_file() for f in files), (path, files)
        named += files
    assert len(named) >= 8 and not any((REPO / "tests" / "fixtures" / f).exists() for f in named)
