"""Every command-line flag of every command the suite ships has help text (``--help`` explains it)."""

import ast

from conftest import REPO


def test_every_cli_flag_has_help_text():
    missing = []
    for path in sorted(
        p
        for d in ("elmo_core", "bert_core", "static_vectors", "benchmarks", "tasks", "experiments")
        for p in (REPO / d).rglob("*.py")
    ):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
                if not any(k.arg == "help" for k in node.keywords):
                    flag = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
                    missing.append(f"{path.relative_to(REPO)}:{node.lineno} {flag}")
    assert not missing, "flags without help text:\n" + "\n".join(missing)
