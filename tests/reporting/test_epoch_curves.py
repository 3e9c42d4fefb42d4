"""The dev metric after each epoch, setting by setting (reporting.epoch_curves)."""

import json

import pytest
from conftest import REPO

from reporting.epoch_curves import main


def _record(path, seed, curve, task="ner"):
    path.mkdir(parents=True)
    record = {
        "record_version": 2,
        "task": task,
        "metric": "f1",
        "ablation": "elmo",
        "profile": "paper",
        "config": {"seed": seed},
        "dev": {"f1": max(curve)},
        "epochs": [{"epoch": i, "dev_f1": v} for i, v in enumerate(curve, 1)],
        "date": f"2026-11-25T0{seed}:00:00+00:00",
        "command": f"python run.py task={task} seed={seed} runs_root=/somewhere/runs",
        "hardware": {"machine": "x86_64", "cpu": "Test CPU", "cpus": 2, "torch_threads": 1, "device": "cpu"},
    }
    (path / "results.json").write_text(json.dumps(record))


def test_rows_per_seed_a_mean_row_and_the_gap_to_the_reference(tmp_path, capsys):
    _record(tmp_path / "a", 0, [70.0, 80.0, 82.0, 90.0])
    _record(tmp_path / "b", 1, [72.0, 81.0, 84.0])
    _record(tmp_path / "c", 2, [60.0, 70.0])  # too short: left out
    _record(tmp_path / "d", 0, [10.0, 20.0, 30.0], task="sst")  # another task
    assert main(["--runs", str(tmp_path), "--task", "ner", "--epochs", "3", "--reference", "84.43"]) == 0
    text = capsys.readouterr().out
    assert "| elmo | as prescribed | 0 | 70.00 / 80.00 / 82.00 | 2.43 |" in text
    assert "| elmo | as prescribed | 1 | 72.00 / 81.00 / 84.00 | 0.43 |" in text
    assert "| elmo | as prescribed | mean ± std (n=2) | 71.00 / 80.50 / 83.00 ± 1.41 | 1.43 |" in text
    assert "| 2 |" not in text and "30.00" not in text
    assert "2 run records" in text and "Test CPU" in text and "runs_root=RUNS" in text and "/somewhere" not in text


def test_the_committed_reference_check_rebuilds_and_errors_are_clear(tmp_path, capsys, monkeypatch):
    """``results/history/paper_small-v2/init_check/curves.md`` is what its records give today with the command
    in its footer."""
    committed = (REPO / "results" / "history" / "paper_small-v2" / "init_check" / "curves.md").read_text()
    command = committed.rsplit("Rebuilt from the records with `", 1)[1].split("`")[0].split()
    assert command[:3] == ["python", "-m", "reporting.epoch_curves"] and "--out" in command
    monkeypatch.chdir(REPO)
    args = command[3:]
    args[args.index("--out") + 1] = str(tmp_path / "curves.md")
    assert main(args) == 0
    text = (tmp_path / "curves.md").read_text()
    variational = "| elmo | elmo.dropout=0.5 task.model.dropout_style=variational | mean ± std (n=4) |"
    assert f"{variational} 73.47 / 80.87 / 82.81 ± 0.58 | 1.62 |" in text  # the profile's dropout is per element
    assert text.replace(str(tmp_path / "curves.md"), "results/history/paper_small-v2/init_check/curves.md") == committed
    capsys.readouterr()
    assert main(["--runs", str(tmp_path / "missing"), "--task", "ner"]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["--runs", str(tmp_path), "--task", "ner"]) == 2
    assert "no ner record" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["--runs", str(tmp_path), "--task", "ner", "--epochs", "0"])
    assert stop.value.code == 2 and "--epochs 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "curves", sorted(str(p.relative_to(REPO)) for p in (REPO / "results").glob("**/curves.md")), ids=str
)
def test_every_committed_curves_file_rebuilds_from_the_command_in_its_footer(curves, tmp_path, monkeypatch):
    """Each committed ``curves.md`` (NER's first epochs against the reference; SICK's paper-profile baseline
    with and without the learning-rate halving) is what its records give today."""
    committed = (REPO / curves).read_text()
    command = committed.rsplit("Rebuilt from the records with `", 1)[1].split("`")[0].split()
    args = command[3:]
    args[args.index("--out") + 1] = str(tmp_path / "curves.md")
    monkeypatch.chdir(REPO)
    assert main(args) == 0
    assert (tmp_path / "curves.md").read_text().replace(str(tmp_path / "curves.md"), curves) == committed


def test_a_setting_added_after_the_records_shows_the_value_they_ran_with():
    """SICK's paper baseline made before ``trainer.lr_halving_updates`` existed halved after every epoch
    without a better score: its setting reads 0 (what it did), not None."""
    from experiments.record import Record
    from reporting.cell_rules import differences

    runs = REPO / "results" / "paper" / "sick_halving" / "runs" / "nli"
    before = Record.read(runs / "+ablation:baseline+profile:paper+seed:0+source:local" / "results.json")
    assert differences(before)["trainer.lr_halving_updates"] == (0, 17193)
    assert before.value < 63 and before.dev["per_class_accuracy"]["entailment"] == 0
