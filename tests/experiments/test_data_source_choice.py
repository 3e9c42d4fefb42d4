"""``source=`` left out: the hub when it can be reached, else the local copies, said in one line; the
design card's own command (``run.py task=ner elmo.position=both``) runs offline as typed."""

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO, SHARED

from experiments.command_line import choose_data_source, overrides_first, prepare, read
from experiments.hydra_adapter import hydra_flags


def chosen(argv: list[str], reachable) -> list[str]:
    """The command line after the data source's choice (``source=local`` added or not)."""
    return choose_data_source(read(argv), reachable=reachable).argv


def test_the_hub_when_reachable_else_the_local_copies(tmp_path, monkeypatch, capsys):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("ELMO_SHARED", str(tmp_path))
    argv = ["task=ner", "elmo.position=both"]
    assert chosen(argv, reachable=lambda: True) == argv
    assert "source=hf" in capsys.readouterr().err
    assert chosen(argv, reachable=lambda: False) == ["source=local", *argv]
    assert f"local copies under {tmp_path / 'data'}" in capsys.readouterr().err


def test_a_choice_on_the_command_line_or_a_mode_without_task_data_is_left_alone(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("ELMO_SHARED", str(tmp_path))
    never = lambda: (_ for _ in ()).throw(AssertionError("the hub was asked"))  # noqa: E731
    for argv in (["task=ner", "source=hf"], ["mode=evaluate", "checkpoint=x"], ["task=ner", "data.dir=/d"]):
        assert chosen(argv, reachable=never) == argv
    monkeypatch.setenv("ELMO_SHARED", str(tmp_path / "absent"))
    assert chosen(["task=ner"], reachable=lambda: False) == ["task=ner"]  # the hub's error says more


def test_the_design_cards_command_runs_offline_as_typed(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ELMO_SHARED": str(SHARED), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "run.py", "task=ner", "elmo.position=both", "mode=dry_run", f"runs_root={tmp_path / 'runs'}",
         f"cache.dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'hydra'}"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "data: the local copies under" in done.stderr and "source:local" in done.stdout


def test_a_relative_data_path_from_another_directory_says_how_to_fix_it(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env.pop("ELMO_SHARED", None)
    done = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "task=ner", "source=local", "mode=dry_run",
         f"runs_root={tmp_path / 'runs'}", f"hydra.run.dir={tmp_path / 'hydra'}"],
        cwd=REPO / "docs", capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ../shared/data/conll2003/eng.train: no such file")
    assert f"relative to the working directory {REPO / 'docs'}" in last and "ELMO_SHARED=" in last


# Hydra's documented flags, before, between and after the overrides (python app.py -m key=a,b;
# python app.py --cfg job key=value): the choice of source must leave each command line readable
FLAG_PLACEMENTS = [
    ["--cfg", "job", "task=ner", "elmo.position=none"],
    ["task=ner", "--cfg", "job", "elmo.position=none"],
    ["task=ner", "elmo.position=none", "--cfg", "job"],
    ["--cfg", "job", "--resolve", "task=ner"],
    ["task=ner", "--cfg", "job", "--resolve"],
    ["-cn", "config", "--cfg", "job", "task=ner"],
    ["task=ner", "-cn", "config", "--cfg", "job"],
    ["-m", "task=ner", "seed=0,1", "mode=dry_run"],
    ["--multirun", "task=ner", "seed=0,1"],
    ["task=ner", "seed=0,1", "-m"],
    ["task=ner", "--multirun", "seed=0,1"],
    ["--info", "config", "task=ner"],
    ["task=ner", "--info"],
    ["--info"],
]


@pytest.mark.parametrize("argv", FLAG_PLACEMENTS, ids=" ".join)
def test_the_chosen_source_joins_the_overrides_wherever_hydras_flags_are(argv, tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("ELMO_SHARED", str(tmp_path))
    before = hydra_flags(argv)
    after = hydra_flags(chosen(argv, reachable=lambda: False), intermixed=False)  # as hydra.main reads it
    assert after is not None and after.overrides == ["source=local", *before.overrides]
    with_source = overrides_first(["source=hf", *argv])  # chosen by the user: kept, and the line still readable
    assert hydra_flags(with_source, intermixed=False).overrides == ["source=hf", *before.overrides]
    for flag in ("cfg", "resolve", "multirun", "config_name", "info"):
        assert getattr(after, flag) == getattr(before, flag)


def _run_offline(argv: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ELMO_SHARED": str(SHARED), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "data: the local copies under" in done.stderr
    return done


@pytest.mark.parametrize(
    "argv",
    [["--cfg", "job", "task=ner", "elmo.position=none"],
     ["task=ner", "-cn", "config", "--cfg", "job", "elmo.position=none"]],
    ids=" ".join,
)  # fmt: skip
def test_a_config_dump_with_flags_anywhere_runs_offline(argv):
    done = _run_offline(argv)
    assert "source: local" not in done.stdout  # the group's choice is not in the dump; its data is
    assert "}/data/conll2003\n" in done.stdout and "\nelmo:\n  position: none\n" in done.stdout


def test_a_sweep_with_the_flag_first_runs_offline(tmp_path):
    done = _run_offline(["-m", "task=ner", "seed=0,1", "mode=dry_run", f"runs_root={tmp_path / 'runs'}",
                         f"cache.dir={tmp_path / 'c'}", f"hydra.sweep.dir={tmp_path / 'hydra'}"])  # fmt: skip
    assert done.stdout.count("source:local") == 2, done.stdout[-2000:]


@pytest.mark.parametrize(
    "argv, named",
    [(["-m", "--cfg", "job", "task=ner,sst"], "--multirun (-m) and --cfg (-c)"),
     (["task=ner", "--info", "-m"], "--multirun (-m) and --info (-i)"),
     (["-r", "task=ner", "-c", "job"], "--run (-r) and --cfg (-c)")],
    ids=" ".join,
)  # fmt: skip
def test_two_of_hydras_commands_at_once_are_one_line(argv, named):
    from experiments.command_line import check_one_command
    from suite_common.errors import ConfigError

    with pytest.raises(ConfigError, match=f"^{re.escape(named)} together: .*nothing was run$"):
        check_one_command(read(argv))
    for alone in (["task=ner", "-m", "seed=0,1"], ["--cfg", "job", "task=ner"], ["--info"], ["task=ner"]):
        check_one_command(read(alone))  # one command (or none: --run) is Hydra's to run


def test_a_sweep_asked_for_its_configuration_stops_in_one_line_offline():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ELMO_SHARED": str(SHARED), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "run.py", "task=ner,sst", "-m", "--cfg", "job"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith("error: --multirun (-m) and --cfg (-c) together")


@pytest.mark.parametrize(
    "argv, expected",
    [(["--hydra-help"], "== Flags =="), (["-sc", "install=bash"], "hydra_bash_completion()")],
    ids=" ".join,
)
def test_hydras_own_help_and_shell_completion_run_as_its_docs_show(argv, expected):
    """Hydra composes its own help without the app's defaults (so a source= the suite added would fail it), and
    shell completion's install=bash is a word for Hydra, not an override of the suite's."""
    assert prepare(argv, reachable=lambda: False) == argv
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ELMO_SHARED": str(SHARED), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and expected in done.stdout, done.stderr[-2000:]
    query = {**env, "COMP_LINE": "python run.py task="}
    done = subprocess.run([sys.executable, "run.py", "-sc", "query=bash"], cwd=REPO, capture_output=True, text=True,
                          env=query)  # fmt: skip
    assert "task=ner" in done.stdout.split(), done.stderr[-2000:]


def test_changing_into_the_run_directory_is_refused_in_one_line():
    """hydra.job.chdir=true would read runs_root=outputs/runs and ../shared from inside the run directory."""
    from experiments.command_line import check_no_chdir
    from suite_common.errors import ConfigError

    for arg in ("hydra.job.chdir=True", "++hydra.job.chdir=true", "hydra.job.chdir=1"):
        with pytest.raises(ConfigError, match=r"^\+*hydra\.job\.chdir=.*leave hydra\.job\.chdir out; nothing was run$"):
            check_no_chdir(read(["task=ner", arg]))
    check_no_chdir(read(["task=ner", "hydra.job.chdir=false", "hydra.run.dir=/tmp/x"]))  # the default, said aloud
