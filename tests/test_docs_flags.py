"""The command-line tools and the documents agree: every ``--flag`` the README, docs/ or
results/README pass to a ``python -m`` tool is one that tool's ``--help`` lists."""

import re
import shlex
import subprocess
import sys

from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "results" / "README.md"]


def documented_flags() -> dict[str, set[str]]:
    flags: dict[str, set[str]] = {}
    for doc in DOCS:
        text = doc.read_text()
        for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
            if block.group(1) not in ("", "bash", "sh", "shell"):
                continue
            for line in re.sub(r"\\\n\s*", " ", block.group(2)).splitlines():
                argv = shlex.split(line, comments=True)
                if len(argv) > 2 and argv[0] in ("python", ".venv/bin/python") and argv[1] == "-m":
                    found = {a.strip("[]").split("=")[0] for a in argv[3:] if a.strip("[]").startswith("--")}
                    flags.setdefault(argv[2], set()).update(found)
    return flags


def test_every_documented_flag_is_in_the_tools_help():
    flags = documented_flags()
    assert len(flags) >= 8
    missing = []
    for module, names in sorted(flags.items()):
        help_text = subprocess.run(
            [sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
        ).stdout
        missing += [f"{module} {flag}" for flag in sorted(names) if flag not in help_text]
    assert missing == []
