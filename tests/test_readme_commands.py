"""The README is executable: every command in the code blocks of README.md, docs/*.md and
results/README.md runs on tiny data (fixtures, a tiny biLM, one epoch, a temporary runs root), with only data paths
and sizes substituted. A Hydra sweep (``-m``) has every one of its jobs composed and validated and
its first job run. Commands that cannot run here are listed in ``NOT_RUN`` with the reason; a new
command that matches no rule fails the test. The runs with the reports that read them, the tools, and the reports
over the committed records are three tests, so that pytest-xdist runs them side by side."""

import itertools
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import get_type_hints

import pytest
import yaml
from conftest import REPO, SAMPLES, shared_path
from documented_commands import (
    DOCS,
    NOT_RUN,
    TINY_KEYS,
    VENV,
    as_run,
    committed_rebuilds,
    documented_commands,
    first_alternatives,
    jobs_of,
    on_cpu,
    reports_of_committed_records,
    run_py_in_process,
    tiny_overrides,
)
from pydantic import TypeAdapter
from tiny_models import tiny_bert

from experiments.run_config import RunConfig

SEED = TypeAdapter(get_type_hints(RunConfig, include_extras=True)["seed"])
REPORTS = itertools.count()  # each documented report writes its own directory (it never writes over another's)


def test_documented_commands_name_the_venv_and_run_in_a_new_shell():
    """Every documented Python command names ``.venv/bin/python`` (or the venv's ``torchrun``), never a bare
    ``python`` that a new shell would resolve to the system's; that interpreter, started from the checkout
    in a shell without ``VIRTUAL_ENV`` and without the venv on ``PATH``, imports what the commands need."""
    import os

    bare = [(w, " ".join(a)) for w, a in documented_commands() if a[0] in ("python", "python3", "torchrun")]
    assert not bare, f"commands that a new shell runs with the system's interpreter: {bare[:5]}"
    assert re.search(r"^VENV\s*\?=\s*\.venv$", (REPO / "Makefile").read_text(), re.M)
    # the interpreter the documents name; under `make test-latest` the tests run in .venv-latest instead,
    # which the same check is made with (the documents' .venv is the one `make test` builds)
    documented = REPO / VENV / "python"
    interpreter = documented if Path(sys.prefix).resolve() == (REPO / ".venv").resolve() else Path(sys.executable)
    shell = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [str(interpreter), "-c", "import hydra, torch, transformers, elmo_core, tasks, reporting; print('ok')"],
        cwd=REPO,
        env=shell,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    done = subprocess.run(
        [str(interpreter), "run.py", "--help"], cwd=REPO, env=shell, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "modes (mode=)" in done.stdout, done.stderr[-2000:]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A tiny exported biLM (with vocabulary and softmax, so fine-tuning works too), tiny texts."""
    root = tmp_path_factory.mktemp("readme")
    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "elmo_core.pretrain",
            "--preset",
            "tiny",
            "--train",
            str(corpus),
            "--out",
            str(root / "bilm"),
            "--max-steps",
            "2",
            "--batch-size",
            "4",
            "--unroll-steps",
            "5",
            "--min-count",
            "1",
            "--no-progress",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    text = root / "text.txt"
    text.write_text("".join(line for line in corpus.read_text().splitlines(keepends=True)[:40]))
    return {"root": root, "bilm": root / "bilm", "text": text, "bert": tiny_bert(root / "bert", max_position=64)}


def run(argv: list[str], where: str, cwd=REPO, timeout=600) -> subprocess.CompletedProcess:
    done = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, f"{where}: {' '.join(argv)}\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
    return done


def run_py(argv: list[str], where: str, env: dict, made: dict) -> None:
    overrides = [a for a in on_cpu(argv)[2:] if a != "-m"]
    if "mode=evaluate" in overrides or "mode=predict" in overrides:
        run_dir = made["ner"]
        raw = env["root"] / "raw.txt"  # mode=predict reads raw text
        raw.write_text("EU rejects German call to boycott British lamb .\n")
        test = SAMPLES["ner"] / "ner_tiny.conll" if "mode=evaluate" in overrides else raw
        overrides = [
            f"checkpoint={run_dir}"
            if o.startswith("checkpoint=")
            else f"data.test_path={test}"
            if o.startswith("data.test_path=")
            else o
            for o in overrides
        ]
        run_py_in_process(overrides, where)
        return
    jobs = jobs_of(overrides) if "-m" in argv else [overrides]
    # each profile's runs in a root of their own: the documented reports read one profile's
    runs_root = env["root"] / {"profile=paper": "runs_paper", "profile=tiny": "runs_tiny"}.get(
        next((o for o in overrides if o.startswith("profile=")), ""), "runs"
    )
    validated: set = set()
    for job in jobs:  # composes and validates every job of a sweep; jobs that differ in the seed alone compose alike
        for seed in (o.split("=", 1)[1] for o in job if o.startswith("seed=")):
            SEED.validate_python(yaml.safe_load(seed))  # the schema's own rule for the seed, as in every composition
        key = tuple(sorted(o for o in job if not o.startswith("seed=")))
        if key not in validated:
            validated.add(key)
            tiny_overrides(job, env, runs_root)
    job = [
        o for o in jobs[0] if not o.startswith(("encoder.model=", "encoder.options=", "encoder.weights="))
    ]  # tiny models
    key = tuple(sorted(job))
    if key in made.setdefault("ran", set()):
        return  # the same run as an earlier command: its jobs were composed and validated above
    made["ran"].add(key)
    stdout = run_py_in_process([*job, *tiny_overrides(job, env, runs_root)], where)
    printed = [
        line.split("checkpoint=", 1)[1].split()[0]
        for line in stdout.splitlines()
        if line.startswith("score a file with it:")
    ]
    task = next((o.split("=", 1)[1] for o in job if o.startswith("task=")), "ner")
    if printed:
        made.setdefault(task, printed[0])


def reads_committed_results(argv: list[str]) -> bool:
    """A module command that reads only the committed records (``--runs results/...``), not the runs
    the documented ``run.py`` commands make: it runs in its own test, beside them (pytest-xdist)."""
    return (
        argv[:2] == ["python", "-m"] and any(a.startswith("results/") for a in argv[3:]) and "outputs/runs" not in argv
    )


def reads_the_runs(argv: list[str]) -> bool:
    """A command that makes runs (``run.py``, ``make demo``) or reads the runs the documented ones make (the
    report and the side reports, whose default runs root is ``outputs/runs``)."""
    if argv[:2] in (["python", "run.py"], ["make", "demo"]):
        return True
    module = argv[2] if argv[:2] == ["python", "-m"] and len(argv) > 2 else ""
    return module.startswith("reporting.") or any(a in ("RUNS", "CACHE") or "outputs/runs" in a for a in argv)


def part_of(argv: list[str]) -> str:
    """Which of the three tests runs a documented command (pytest-xdist runs them side by side)."""
    if reads_committed_results(argv):
        return "reports of the committed records"
    return "runs and their reports" if reads_the_runs(argv) else "tools"


@pytest.mark.parametrize("part", ["runs and their reports", "tools", "reports of the committed records"])
def test_every_documented_command_runs(part, env, tmp_path):
    before = checkout_files()
    commands = [(w, as_run(a)) for w, a in documented_commands()]
    assert len(commands) > 30
    commands = [(w, a) for w, a in commands if part_of(a) == part]
    assert commands
    made: dict = {}
    later = []
    makefile = (REPO / "Makefile").read_text()
    demo = shlex.split(re.search(r"^demo:.*\n\t\$\(PY\) (.*)$", makefile, re.M).group(1).replace(" $(ARGS)", ""))
    for where, argv in commands:
        line = " ".join(argv)
        if any(line.startswith(k) for k in NOT_RUN):
            continue
        if argv[:2] == ["make", "demo"]:
            run_py(["python", *demo], f"{where} (Makefile)", env, made)
        elif argv[:2] == ["python", "run.py"]:
            run_py(argv, where, env, made)
        elif argv[0] == "python" and argv[1] == "-m":
            later.append((where, argv))  # modules run after the runs they may read
        else:
            pytest.fail(f"{where}: no rule runs this documented command: {line}")
    ran: set = set()
    rebuilds = {tuple(args) for args in committed_rebuilds().values()}  # test_report runs them, comparing bytes
    rebuilds |= {tuple(args) for args in reports_of_committed_records()}  # and these, beside the rebuilds
    for where, argv in later:  # a command documented twice (or once per device) runs once: run_module keeps count
        if tuple(first_alternatives(on_cpu(argv)))[3:] not in rebuilds:
            run_module(argv, where, env, tmp_path, ran)
    assert checkout_files() <= before, sorted(checkout_files() - before)  # the commands wrote only under tmp_path


def checkout_files() -> set[str]:
    """What git does not track in the checkout (untracked and ignored), caches of Python and tools aside."""
    listed = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=REPO, capture_output=True, text=True
    ).stdout.splitlines()
    skip = ("__pycache__", ".pytest_cache", ".ruff_cache", ".venv")
    return {line[3:] for line in listed if line[:2] in ("??", "!!") and not any(s in line for s in skip)}


def run_module(argv: list[str], where: str, env: dict, tmp_path: Path, ran: set) -> None:
    module, args = argv[2], first_alternatives(on_cpu(argv)[3:])
    sub = {
        "O": str(env["bilm"] / "options.json"),
        "W": str(env["bilm"] / "weights.hdf5"),
        "key.conll": str(SAMPLES["coref"] / "coref_tiny.conll"),
        "response.conll": str(SAMPLES["coref"] / "coref_tiny.conll"),
        "outputs/runs": str(env["root"] / "runs"),  # the runs the documented run.py commands made
        "RUNS": str(env["root"] / "runs"),
        "CACHE": str(env["root"] / "cache"),
        "sentences.txt": str(env["text"]),
        "task_train.txt": str(env["text"]),
        "task_dev.txt": str(env["text"]),
    }
    args = [sub.get(a, a) for a in args]
    for flag in ("--train", "--heldout", "--corpus"):  # the shared corpus -> a tiny text
        args = [str(env["text"]) if i and args[i - 1] == flag else a for i, a in enumerate(args)]
    if module == "static_vectors.intrinsic":  # a shipped file -> its 5,000 most frequent words (same format, faster)
        args = [str(first_words(REPO / a, tmp_path, 5000)) if a.endswith(".hdf5") else a for a in args]
    for flag in ("--out", "--output"):  # outputs -> the test's directory
        args = [str(tmp_path / Path(a).name) if i and args[i - 1] == flag else a for i, a in enumerate(args)]
    extra = {
        "elmo_core.pretrain": ["--max-steps", "2", "--batch-size", "4", "--unroll-steps", "5", "--min-count", "1"],
        "elmo_core.neighbors": ["--max-sentences", "20", "--vocabulary", "200"],
        "elmo_core.size_pilots": [
            "--cells",
            "8",
            "16",
            "--pilot-minutes",
            "0.02",
            "--total-minutes",
            "0.05",
            "--preset",
            "tiny",
            "--batch-size",
            "4",
            "--unroll-steps",
            "5",
        ],  # fmt: skip
        "elmo_core.perplexity": ["--batch-size", "8"],
        "benchmarks.bilm_speed": ["--sentences", "2", "--repeats", "1", "--peak-seconds", "0.1"],
        "benchmarks.pretrain_speed": [
            "--configs",
            "small",
            "--steps",
            "1",
            "--rounds",
            "1",
            "--corpus",
            str(env["text"]),
            "--peak-seconds",
            "0.1",
            "--profile",
            "1",
        ],
        "benchmarks.cache_sweep": ["--configs", "2", "--epochs", "1", "--sentences", "20", "--model", str(env["bilm"])],
        "reporting.report": ["--out", str(tmp_path / f"report{next(REPORTS)}"), "--accept", *TINY_KEYS],
        "benchmarks.paper_scale": [
            "--options",
            str(env["bilm"] / "options.json"),
            "--weights",
            str(env["bilm"] / "weights.hdf5"),
            "--tasks",
            "ner,nli",
            "--sample-tokens",
            "40",
            "--updates",
            "1",
            "--out",
            str(tmp_path / "paper_scale.md"),
        ],
        "benchmarks.dry_run_check": [
            "--tasks",
            "ner",
            "--arms",
            "elmo",
            "--override",
            *[
                o
                for o in tiny_overrides(["task=ner"], env, env["root"] / "runs")
                if not o.startswith(("runs_root=", "cache."))
            ],
        ],
        "reporting.paper_profile": [],
        "reporting.cache_dtype_check": [],
        "reporting.setting_sweep": [],
        "reporting.epoch_curves": [],
        "elmo_core.embed": [],
        "reporting.compare_tables": [],
        "tasks.coref.metric": [],
        "static_vectors.build": ["--shared", str(tiny_shared(env, tmp_path)), "--keep", "50", "--min-count", "1"],
        "static_vectors.intrinsic": [],
        "bert_core.bert_pretrain": [
            "--max-steps",
            "2",
            "--vocab-size",
            "200",
            "--hidden",
            "16",
            "--layers",
            "1",
            "--heads",
            "2",
            "--intermediate",
            "32",
            "--max-length",
            "32",
            "--batch-size",
            "4",
            "--warmup-steps",
            "1",
            "--no-progress",
        ],
    }
    if module not in extra:
        pytest.fail(f"{where}: no rule runs this documented module: {module}")
    if module == "reporting.report" and "--runs" not in args:
        args += ["--runs", str(env["root"] / ("runs_paper" if "paper" in args else "runs"))]
    if module == "bert_core.bert_pretrain" and "--evaluate" in args:
        args[args.index("--evaluate") + 1] = str(env["bert"])  # the tiny random BERT for the shipped one
        extra = {module: ["--max-length", "32", "--batch-size", "4"]}
    if module == "elmo_core.neighbors" and "--word" in args:
        args[args.index("--word") + 1] = "the"
    args = without_options(args, {a for a in extra[module] if a.startswith("--")})  # the test's sizes replace them
    same = args
    if "--device" in args and args[args.index("--device") + 1] == "cpu":  # a GPU command made a CPU one: the default
        same = without_options(args, {"--device"})  # here (no module's default is another device on a CPU machine)
    if (module, *same) in ran:
        return  # the same command as an earlier one, once the test's sizes replace the documented ones
    ran.add((module, *same))
    run([sys.executable, "-m", module, *args, *extra[module]], where, timeout=900)


def without_options(args: list[str], flags: set[str]) -> list[str]:
    """``args`` less each of ``flags`` and the values after it: what argparse reads when the same flags come
    again later (the last occurrence wins, a list option's values too)."""
    out, dropping = [], False
    for a in args:
        if a.startswith("-"):
            dropping = a.split("=", 1)[0] in flags
        if not dropping:
            out.append(a)
    return out


def first_words(path: Path, tmp_path: Path, n: int) -> Path:
    """A vectors file of the suite's format holding the first ``n`` words of ``path`` (most frequent first)."""
    from static_vectors.store import read_hdf5, write_hdf5

    words, vectors = read_hdf5(path)
    out = tmp_path / f"first_{n}_{path.name}"
    write_hdf5(out, words[:n], vectors[:n])
    return out


def tiny_shared(env: dict, tmp_path: Path) -> Path:
    """A shared folder whose biLM text is the tiny text (for the vectors' build)."""
    text = tmp_path / "shared" / "data" / "lm_corpus" / "train"
    text.mkdir(parents=True, exist_ok=True)
    (text / "tiny.txt").write_text(env["text"].read_text())
    return tmp_path / "shared"


def test_every_python_snippet_runs(tmp_path):
    """The documents' Python blocks run as written (the embedded biLM, no placeholders)."""
    snippets = [
        (doc, block.group(1)) for doc in DOCS for block in re.finditer(r"```python\n(.*?)```", doc.read_text(), re.S)
    ]
    assert snippets, "no Python snippet found"
    for doc, code in snippets:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
        )
        assert done.returncode == 0, f"{doc.relative_to(REPO)}:\n{code}\n{done.stderr[-2000:]}"
