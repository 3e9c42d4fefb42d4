"""The documents' commands as ``test_readme_commands`` reads and runs them: where they are (``DOCS``),
which cannot run here (``NOT_RUN``), what the tiny runs change (``TINY_KEYS``: each task file's sample
and tiny sizes, ``task_setups.tiny_data``), and how a documented command becomes the command run
(``as_run``, ``on_cpu``, ``first_alternatives``, ``jobs_of``, ``tiny_overrides``, ``run_py_in_process``)."""

import itertools
import re
import shlex
import sys
from pathlib import Path

import pytest
from conftest import REPO
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from task_setups import tiny_data

from experiments.run_config import as_run as typed_run

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "results" / "README.md",
        REPO / "results" / "provenance.md"]  # fmt: skip
NOT_RUN = {  # (start of the command) -> why the test does not run it
    "make test": "the test suite itself (CI runs it)",
    "pip install torch": "installs from PyTorch's own index over the network "
    "(the machines here have the wheel locally)",
    "torchrun": "a template ('...'): several processes of the pretrain command, which is run below",
    "python -m elmo_core.embed --preset": "downloads a published biLM (no network here); "
    "tests/encoders/test_remote_weights.py serves the bilm-tf fixture by URL from 127.0.0.1 instead",
    "perl srl-eval.pl": "the official CoNLL-2005 scorer, not shipped here; "
    "tests/tasks/test_srl_scorer_cases.py holds its counts",
}
TINY_KEYS = [
    "data.train_file",
    "data.dev_file",
    "data.format",
    "data.words",
    "task.model",
    "task.max_training_sentences",
    "trainer.max_epochs",
    "trainer.min_updates",
    "encoder.finetune_epochs",
]  # what the tiny runs change: the report tables them anyway


def documented_commands() -> list[tuple[str, list[str]]]:
    """(where, argv) of every command line in the documents' code blocks (continuations joined,
    comments dropped)."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
            if block.group(1) not in ("", "bash", "sh", "shell"):
                continue
            first_line = text[: block.start()].count("\n") + 2
            joined = re.sub(r"\\\n\s*", " ", block.group(2))
            for k, line in enumerate(joined.splitlines()):
                argv = shlex.split(line, comments=True)
                if argv:
                    out.append((f"{doc.relative_to(REPO)}:{first_line + k}", argv))
    return out


VENV = ".venv/bin/"  # the Makefile's VENV: what `make demo` / `make test` create, and what the documents name


def committed_rebuilds() -> dict[str, list[str]]:
    """Committed table directory -> the arguments of the documented report that rebuilds it in place
    (``--out`` names a directory of ``results/`` holding a ``report.json``). ``test_report`` runs these as written and
    compares every byte, so ``test_readme_commands`` leaves them to it."""
    out: dict[str, list[str]] = {}
    for _, argv in documented_commands():
        argv = first_alternatives(on_cpu(as_run(argv)))  # as test_readme_commands keys the commands it runs
        if argv[:3] == ["python", "-m", "reporting.report"] and "--out" in argv[:-1]:
            target = argv[argv.index("--out") + 1]
            if target.startswith("results/") and (REPO / target / "report.json").is_file():
                out.setdefault(target, argv[3:])
    return out


def reports_of_committed_records() -> list[list[str]]:
    """The arguments of the documented reports that read committed records (``--runs results/...``) into a directory
    of their own (``--out`` elsewhere, e.g. ``--split test``). ``test_report`` runs them in the process that rebuilt
    the committed tables, where every record's answers are known already; ``test_readme_commands`` leaves them."""
    out = []
    rebuilds = list(committed_rebuilds().values())
    for _, argv in documented_commands():
        argv = first_alternatives(on_cpu(as_run(argv)))
        if argv[:3] == ["python", "-m", "reporting.report"] and "--runs" in argv[:-1] and "--out" in argv[:-1]:
            runs = argv[argv.index("--runs") + 1]
            if runs.startswith("results/") and argv[3:] not in rebuilds and argv[3:] not in out:
                out.append(argv[3:])
    return out


def as_run(argv: list[str]) -> list[str]:
    """A documented command as this test runs it: ``.venv/bin/X`` -> ``X`` (the test's own interpreter)."""
    return [argv[0][len(VENV) :] if argv[0].startswith(VENV) else argv[0], *argv[1:]]


def jobs_of(overrides: list[str]) -> list[list[str]]:
    """The jobs of a Hydra multirun: the Cartesian product of its sweeps (command line and
    ``hydra.sweeper.params`` of a +sweep config)."""
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        plain = [o for o in overrides if "," not in o and "range(" not in o]
        cfg = compose("config", overrides=plain, return_hydra_config=True)
    params = dict(cfg.hydra.sweeper.get("params") or {})
    parser = OverridesParser.create()
    for o in overrides:
        parsed = parser.parse_override(o)
        params[parsed.get_key_element()] = o.split("=", 1)[1]
    axes = []
    for key, value in params.items():
        parsed = parser.parse_override(f"{key}={value}")
        axes.append(
            [f"{key}={v}" for v in parsed.sweep_string_iterator()] if parsed.is_sweep_override() else [f"{key}={value}"]
        )
    return [list(job) for job in itertools.product(*axes)]


def tiny_overrides(job: list[str], env: dict, runs_root: Path) -> list[str]:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=job)
    typed_run(cfg)  # every documented value is one the schema accepts
    task = cfg.task.name
    if cfg.encoder.kind == "transformer":
        encoder = [f"encoder.model={env['bert']}"]  # no hub in tests
    else:
        encoder = [
            f"encoder.options={env['bilm'] / 'options.json'}",
            f"encoder.weights={env['bilm'] / 'weights.hdf5'}",
            "encoder.finetune_epochs=1",
        ]
    sample = [f"embed_sample.out={env['root'] / 'embed_sample'}"] if cfg.mode == "embed_sample" else []
    folds = ["data.folds=3"] if cfg.data.get("folds") else []  # a cross-validation: the fixture has 3 documents
    return [
        *tiny_data(task),  # the task file's sample and tiny sizes
        *encoder,
        *sample,  # its default, outputs/embed_sample, is in the checkout
        *folds,
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        f"cache.dir={env['root'] / 'cache'}",
        f"runs_root={runs_root}",
    ]


def run_py_in_process(overrides: list[str], where: str) -> str:
    """``python run.py OVERRIDES`` in this process (Hydra's command line, run.py's main): the same
    parsing, configuration, run directory and recipe as the command, without a new interpreter."""
    import contextlib
    import io
    import runpy

    import torch
    from hydra.core.global_hydra import GlobalHydra

    threads, argv, out = torch.get_num_threads(), sys.argv, io.StringIO()
    GlobalHydra.instance().clear()
    sys.argv = [str(REPO / "run.py"), *overrides]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(REPO / "run.py"), run_name="__main__")
    except SystemExit as e:
        pytest.fail(f"{where}: python run.py {' '.join(overrides)} exited with {e.code}\n{out.getvalue()[-2000:]}")
    finally:
        sys.argv = argv
        GlobalHydra.instance().clear()
        torch.set_num_threads(threads)
    return out.getvalue()


def on_cpu(argv: list[str]) -> list[str]:
    """A documented GPU command as this machine can run it: ``device=cuda`` / ``--device cuda`` -> cpu."""
    out = ["device=cpu" if a == "device=cuda" else a for a in argv]
    return ["cpu" if i and out[i - 1] == "--device" and a.startswith("cuda") else a for i, a in enumerate(out)]


def first_alternatives(argv: list[str]) -> list[str]:
    """``[--flag a|b]`` -> ``--flag a``: a documented option with its first alternative."""
    out = []
    for a in argv:
        a = a.strip("[]")
        out.append(a.split("|")[0] if "|" in a else a)
    return out
