"""The README is executable: every command in the code blocks of README.md, docs/*.md and
results/README.md runs on tiny data (fixtures, a tiny biLM, one epoch, a temporary runs root), with only data paths
and sizes substituted. A Hydra sweep (``-m``) has every one of its jobs composed and validated and
its first job run. Commands that cannot run here are listed in ``NOT_RUN`` with the reason; a new
command that matches no rule fails the test. The reports over the committed records run in a test of
their own, so that the two halves run side by side."""

import itertools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, shared_path
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from tiny_models import tiny_bert

from experiments.config_schema import validate

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "results" / "README.md"]
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
TINY = {  # task -> data files and sizes substituted for the shared data and the profile's model sizes
    "ner": ["data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll"],
    "sst": ["data.train_file=sst_tiny.txt", "data.dev_file=sst_tiny.txt"],
    "srl": ["data.train_file=srl_tiny.conllu", "data.dev_file=srl_tiny.conllu", "data.format=conllu"],
    "qa": [
        "data.train_file=squad_tiny.json",
        "data.dev_file=squad_tiny.json",
        "task.model.hidden=6",
        "task.model.linear=8",
    ],
    "nli": ["data.train_file=sick_tiny.tsv", "data.dev_file=sick_tiny.tsv", "data.format=sick", "task.model.hidden=8"],
    "coref": [
        "data.train_file=coref_tiny.conll",
        "data.dev_file=coref_tiny.conll",
        "task.model.hidden=8",
        "task.model.ffnn_size=8",
        "task.model.feature_size=4",
        "task.max_training_sentences=2",
    ],
    "probe_pos": ["data.train_file=pos_tiny.txt", "data.dev_file=pos_tiny.txt"],
    "probe_wsd": ["data.words=[wsd_tiny_hard,wsd_tiny_line]"],
}
MODEL_SIZES = ["task.model.word_dim=8", "task.model.char_filters=4"]
REPORTS = itertools.count()  # each documented report writes its own directory (it never writes over another's)
TINY_KEYS = [
    "data.train_file",
    "data.dev_file",
    "data.format",
    "data.words",
    "task.model",
    "task.max_training_sentences",
    "trainer.max_epochs",
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


def as_run(argv: list[str]) -> list[str]:
    """A documented command as this test runs it: ``.venv/bin/X`` -> ``X`` (the test's own interpreter)."""
    return [argv[0][len(VENV) :] if argv[0].startswith(VENV) else argv[0], *argv[1:]]


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
    validate(cfg)  # every documented value is one the schema accepts
    task = cfg.task.name
    sizes = [o for o in MODEL_SIZES if task not in ("probe_pos", "probe_wsd")]
    if cfg.encoder.kind == "transformer":
        encoder = [f"encoder.model={env['bert']}"]  # no hub in tests
    else:
        encoder = [
            f"encoder.options={env['bilm'] / 'options.json'}",
            f"encoder.weights={env['bilm'] / 'weights.hdf5'}",
            "encoder.finetune_epochs=1",
        ]
    return [
        f"data.dir={FIXTURES}",
        *TINY[task],
        *sizes,
        *encoder,
        "trainer.max_epochs=1",
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


def run_py(argv: list[str], where: str, env: dict, made: dict) -> None:
    overrides = [a for a in on_cpu(argv)[2:] if a != "-m"]
    if "mode=evaluate" in overrides or "mode=predict" in overrides:
        run_dir = made["ner"]
        raw = env["root"] / "raw.txt"  # mode=predict reads raw text
        raw.write_text("EU rejects German call to boycott British lamb .\n")
        test = FIXTURES / "ner_tiny.conll" if "mode=evaluate" in overrides else raw
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
    runs_root = env["root"] / ("runs_paper" if "profile=paper" in overrides else "runs")
    for job in jobs:
        tiny_overrides(job, env, runs_root)  # composes and validates every job of a sweep
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


@pytest.mark.parametrize("part", ["runs and tools", "reports of the committed records"])
def test_every_documented_command_runs(part, env, tmp_path):
    commands = [(w, as_run(a)) for w, a in documented_commands()]
    assert len(commands) > 30
    commands = [(w, a) for w, a in commands if reads_committed_results(a) == (part != "runs and tools")]
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
    for where, argv in later:
        run_module(argv, where, env, tmp_path)


def _optional(argv: list[str]) -> list[str]:
    """``[--flag a|b]`` -> ``--flag a``: a documented option with its first alternative."""
    out = []
    for a in argv:
        a = a.strip("[]")
        out.append(a.split("|")[0] if "|" in a else a)
    return out


def run_module(argv: list[str], where: str, env: dict, tmp_path: Path) -> None:
    module, args = argv[2], _optional(on_cpu(argv)[3:])
    sub = {
        "O": str(env["bilm"] / "options.json"),
        "W": str(env["bilm"] / "weights.hdf5"),
        "key.conll": str(FIXTURES / "coref_tiny.conll"),
        "response.conll": str(FIXTURES / "coref_tiny.conll"),
        "outputs/runs": str(env["root"] / "runs"),  # the runs the documented run.py commands made
        "sentences.txt": str(env["text"]),
        "task_train.txt": str(env["text"]),
        "task_dev.txt": str(env["text"]),
    }
    args = [sub.get(a, a) for a in args]
    for flag in ("--train", "--heldout", "--corpus"):  # the shared corpus -> a tiny text
        args = [str(env["text"]) if i and args[i - 1] == flag else a for i, a in enumerate(args)]
    for flag in ("--out", "--output"):  # outputs -> the test's directory
        args = [str(tmp_path / Path(a).name) if i and args[i - 1] == flag else a for i, a in enumerate(args)]
    extra = {
        "elmo_core.pretrain": ["--max-steps", "2", "--batch-size", "4", "--unroll-steps", "5", "--min-count", "1"],
        "elmo_core.neighbors": ["--max-sentences", "20", "--vocabulary", "200"],
        "elmo_core.perplexity": ["--batch-size", "8"],
        "benchmarks.bilm_speed": ["--sentences", "8", "--repeats", "1"],
        "benchmarks.pretrain_speed": [
            "--configs",
            "small",
            "--steps",
            "1",
            "--rounds",
            "1",
            "--corpus",
            str(env["text"]),
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
        "experiments.record_migration": [],
        "reporting.paper_profile": [],
        "reporting.cache_dtype_check": [],
        "reporting.setting_sweep": [],
        "reporting.epoch_curves": [],
        "elmo_core.embed": [],
        "reporting.compare_tables": [],
        "tasks.coref.metric": [],
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
    run([sys.executable, "-m", module, *args, *extra[module]], where, timeout=900)


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
