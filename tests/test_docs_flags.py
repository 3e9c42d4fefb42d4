"""The command-line tools and the documents agree: every ``--flag`` the README, docs/ or
results/README pass to a ``python -m`` tool is one that tool's ``--help`` lists (each tool's ``__main__``
run in this process, as ``python -m`` runs it; the documented commands themselves run as subprocesses in
``test_readme_commands``)."""

import contextlib
import io
import re
import runpy
import shlex
import sys
import warnings

from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "results" / "README.md",
        REPO / "results" / "provenance.md"]  # fmt: skip


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
        help_text = help_of(module)
        assert "usage:" in help_text, f"{module} --help printed no usage"
        missing += [f"{module} {flag}" for flag in sorted(names) if flag not in help_text]
    assert missing == []


def help_of(module: str) -> str:
    """What ``python -m module --help`` prints, run in this process."""
    out, argv = io.StringIO(), sys.argv
    sys.argv = [module, "--help"]
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module's package imported it already
            with contextlib.suppress(SystemExit):
                runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        sys.argv = argv
    return out.getvalue()


def test_info_before_an_override_shows_hydras_information():
    """``--info`` takes an optional topic: ``run.py --info task=ner`` is the information of that configuration
    (Hydra's flags work wherever they stand, docs/configuration.md), not argparse's usage message."""
    import os
    import subprocess

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for argv in (["--info", "task=ner"], ["task=ner", "--info"]):
        done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, env=env, capture_output=True, text=True)
        assert done.returncode == 0 and "Hydra" in done.stdout and "usage:" not in done.stderr, done.stderr[-1500:]
