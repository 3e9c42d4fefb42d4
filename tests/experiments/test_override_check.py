"""Every key and group option on the command line exists (experiments.command_line): a typo stops the
command in one line with exit status 2, naming the nearest valid key, and writes nothing."""

import subprocess
import sys

import pytest
from conftest import REPO

from experiments.command_line import check_overrides, read
from suite_common.errors import ConfigError


@pytest.mark.parametrize(
    "args,message",
    [
        (["elmo.positon=both"], "elmo.positon: no such setting (did you mean position?)"),
        (["+elmo.positon=both"], "elmo.positon: no such setting (did you mean position?)"),
        (["++trainer.max_epoch=2"], "trainer.max_epoch: no such setting (did you mean max_epochs?)"),
        (["~elmo.dropuot"], "~elmo.dropuot: no such setting (did you mean dropout?)"),
        (["task=ner", "seed=-1"], "seed=-1: must be greater than or equal to 0; nothing was run"),
        (["task=nre"], "task=nre: no such task (did you mean ner?)"),
        (["+ablation=inptu"], "ablation=inptu: no such ablation (did you mean input?)"),
        (
            ["-m", "task=ner,sst", "task.model.char_width=5", "task.model.predicate_dim=9"],
            "task.model.predicate_dim: no such setting (did you mean word_dim, char_dim?) (sweep job task=ner)",
        ),  # an SRL key: exists for SRL only
        (
            ["-m", "encoder=bilm,transformer", "encoder.state=stateful"],  # a biLM key: exists for the biLM only
            "encoder.state: no such setting (known: batch_size, finetune, finetune_epochs, kind, max_length, model, "
            "pooling, revision) (sweep job encoder=transformer)",
        ),
        (
            ["encoder.weights=https://example.org/w.hdf5#sha256=00ff"],  # a pin, unquoted
            """quote a value holding # or $ for Hydra, as in 'encoder.weights="https://example.org/w.hdf5#sha256=00ff"'""",
        ),
    ],
)
def test_unknown_keys_and_options_are_refused(args, message):
    with pytest.raises(ConfigError) as e:
        check_overrides(read(args))
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "+sweep=table1", "profile=paper", "source=local", "task=ner,sst", "+ablation=elmo,baseline", "seed=0,1"],
        ["task=srl", "task.model.layers=2", "hydra.launcher.n_jobs=2", "hydra/launcher=joblib"],
        ["task=nli", "data.format=sick", "encoder=transformer", "encoder.pooling=mean", "cache.max_gb=5"],
        ["--cfg", "job", "mode=evaluate", "checkpoint=/x", "data.test_path=/y"],
    ],
)
def test_valid_command_lines_pass(args):
    check_overrides(read(args))


@pytest.mark.parametrize("override", ["elmo.positon=both", "+elmo.positon=both", "task=nre"])
def test_run_py_refuses_in_one_line_and_leaves_no_directory(override, tmp_path):
    runs = tmp_path / "runs"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "task=ner" if override != "task=nre" else "seed=0",
            override,
            "source=local",
            f"runs_root={runs}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    assert override.lstrip("+").split("=")[0 if override != "task=nre" else 1] in lines[0]
    assert not runs.exists() and not (tmp_path / "outputs").exists() and not (tmp_path / "multirun").exists()


def test_a_bad_value_in_any_sweep_job_stops_the_sweep_before_the_first_job(tmp_path):
    """``-m task=nli,sst trainer.max_epochs=1,x`` trained two jobs before failing."""
    import subprocess
    import sys

    from conftest import REPO

    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "-m",
            "task=nli,sst",
            "trainer.max_epochs=1,x",
            "source=local",
            f"runs_root={tmp_path / 'runs'}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "trainer.max_epochs='x': must be a valid integer (sweep job task=nli trainer.max_epochs=x)" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_the_quoted_pin_the_message_suggests_is_read():
    check_overrides(read(['encoder.weights="https://example.org/w.hdf5#sha256=00ff"']))


def test_a_record_of_a_newer_version_is_not_called_earlier(tmp_path):
    import json

    from experiments.record import RECORD_VERSION, Record
    from suite_common.errors import DataError

    path = tmp_path / "results.json"
    for version, says in (
        (RECORD_VERSION + 1, "a newer version of the suite"),
        (RECORD_VERSION - 1, "earlier versions"),
    ):
        path.write_text(json.dumps({"record_version": version, "task": "ner", "config": {}}))
        with pytest.raises(DataError, match=says):
            Record.read(path)
