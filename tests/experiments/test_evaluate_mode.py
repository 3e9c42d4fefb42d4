"""``mode=evaluate`` scores any file with a trained model, the printed line pastes as it is, and
``run.py`` reports library errors as one line."""

import json
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES
from run_configs import compose_cfg, tiny_ner_cfg

from experiments import runner, trained_runs
from experiments.run_config import as_run


def test_evaluate_mode_scores_any_file(bilm_files, tmp_path):
    cfg = tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input")
    out = tmp_path / "run"
    out.mkdir()
    trained = runner.train(as_run(cfg), out)
    ev = compose_cfg(
        ["mode=evaluate", f"checkpoint={out / 'best.pt'}", f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}"]
    )
    report = trained_runs.evaluate(as_run(ev), out)
    assert report["metrics"]["f1"] == pytest.approx(trained["dev"]["f1"])
    assert report["data_format"] == next(iter(runner.make_task(as_run(cfg)).readers))  # the reader used, never null
    assert report["encoder_kind"] == "bilm" and report["encoder"]["sha256"] == trained["bilm"]["sha256"]
    import torch

    saved = torch.load(out / "best.pt", weights_only=True)
    assert saved["encoder_sha256"] == trained["bilm"]["sha256"]
    saved["bilm_sha256"] = saved.pop("encoder_sha256")  # a checkpoint written before the key was renamed: refused
    torch.save(saved, out / "best.pt")
    with pytest.raises(KeyError, match="encoder_sha256"):
        trained_runs.evaluate(as_run(ev), out)


def test_printed_evaluate_line_pastes_as_it_is_and_keeps_the_training_format(bilm_files, tmp_path):
    """A SICK-trained ESIM (data.format=sick) scores a SICK file through the evaluate line the run
    printed, with the run directory pasted unquoted; each test file gets its own evaluation directory."""
    import shlex
    import subprocess
    import sys

    o, w = bilm_files
    runs = tmp_path / "runs"
    train = [
        sys.executable,
        str(REPO / "run.py"),
        "task=nli",
        "source=local",
        f"data.dir={SAMPLES['nli']}",
        "data.train_file=sick_tiny.tsv",
        "data.dev_file=sick_tiny.tsv",
        f"encoder.options={o}",
        f"encoder.weights={w}",
        f"cache.dir={tmp_path / 'cache'}",
        f"runs_root={runs}",
        "elmo.position=input",
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        "task.model.hidden=8",
        "task.model.word_dim=8",
        "task.model.char_filters=4",
        "seed=3",
    ]
    done = subprocess.run(train, capture_output=True, text=True, cwd=REPO, timeout=300)  # from the checkout, as a user
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("score a file with it: "))
    command = shlex.split(line.split(": ", 1)[1])  # exactly what a user pastes
    run_dir = Path(command[3].split("=", 1)[1])  # checkpoint=<run dir>
    assert (
        command[1:3] == ["run.py", "mode=evaluate"]
        and command[-1] == f"data.test_path={SAMPLES['nli'] / 'sick_tiny.tsv'}"
    )
    assert "=" not in run_dir.name and "," not in run_dir.name
    # a new shell that has not activated the virtual environment: no VIRTUAL_ENV, the system's PATH
    import os

    shell = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    shell["PATH"] = os.pathsep.join(p for p in shell.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    printed = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300, env=shell)
    assert printed.returncode == 0, printed.stderr[-2000:]  # the printed line runs as printed: its own dev file
    written = next(run_dir.glob("evaluations/sick_tiny.tsv@*/eval_results.json"))
    assert written.is_file()
    lines = [x for x in printed.stdout.strip().splitlines() if not x.startswith("torch threads:")]
    assert len(lines) == 3 and lines[0].startswith(f"nli accuracy on {SAMPLES['nli'] / 'sick_tiny.tsv'}: ")
    assert lines[-1].endswith(str(written)) and "{" not in printed.stdout
    later = [x for x in done.stdout.splitlines() if x.startswith(("the same without ELMo: ", "a table of the runs: "))]
    assert [x.split(": ", 1)[0] for x in later] == ["the same without ELMo", "a table of the runs"]
    assert "+ablation=baseline" in later[0] and f"--runs {runs}" in later[1]
    baseline = shlex.split(later[0].split(": ", 1)[1])  # every override of the launch but ELMo's
    for kept in (
        "seed=3",
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        "task.model.hidden=8",
        f"runs_root={runs}",
        f"data.dir={SAMPLES['nli']}",
    ):
        assert kept in baseline, (kept, baseline)
    assert not any(o.startswith(("encoder.", "elmo.", "cache.")) for o in baseline), baseline
    reports = []
    for name in ("sick_tiny.tsv", "copy.tsv"):
        test_file = SAMPLES["nli"] / name if name != "copy.tsv" else tmp_path / name
        if name == "copy.tsv":
            test_file.write_text("\n".join((SAMPLES["nli"] / "sick_tiny.tsv").read_text().splitlines()[:4]) + "\n")
        evaluate = [*command[:-1], f"data.test_path={test_file}", f"runs_root={runs}"]
        done = subprocess.run(evaluate, capture_output=True, text=True, cwd=REPO, timeout=300, env=shell)
        assert done.returncode == 0, done.stderr[-2000:]
        reports.append(next(run_dir.glob(f"evaluations/{name}@*/eval_results.json")))
    first = json.loads(reports[0].read_text())
    trained = json.loads((run_dir / "results.json").read_text())
    assert first["data_format"] == "sick" and first["metrics"]["accuracy"] == pytest.approx(trained["dev"]["accuracy"])
    assert reports[0].parent != reports[1].parent and reports[0].exists()  # the second did not overwrite the first
    assert [p.name for p in (runs / "nli").iterdir()] == [run_dir.name]  # evaluate left no directory of its own


def test_embed_sample_writes_into_its_own_folder(bilm_files, tmp_path):
    """``mode=embed_sample`` writes under ``embed_sample.out``, never into a task's run directory."""
    import subprocess
    import sys

    o, w = bilm_files
    runs, out = tmp_path / "runs", tmp_path / "sample"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "mode=embed_sample",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"embed_sample.sentences={SAMPLES['ner'] / 'ner_tiny.conll'}",
            "embed_sample.limit=3",
            f"embed_sample.out={out}",
            f"runs_root={runs}",
            "threads=1",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "embed_sample.json").read_text())
    assert report["sentences"] == 3 and (out / "embeddings.hdf5").is_file()
    assert not runs.exists()


def test_run_py_reports_library_errors_as_one_line(tmp_path):
    """A data or configuration error raised by library code reaches the user as one line
    (no traceback) with exit status 2."""
    import subprocess
    import sys

    for overrides, message in (
        (["task=ner", f"data.dir={tmp_path}"], f"error: {tmp_path / 'eng.train'}: no such file"),
        (
            [
                "task=nli",
                f"data.dir={SAMPLES['nli']}",
                "data.train_file=sick_tiny.tsv",
                "data.dev_file=sick_tiny.tsv",
                "data.format=xml",
            ],
            "error: data.format must be one of",
        ),
    ):
        done = subprocess.run(
            [sys.executable, str(REPO / "run.py"), *overrides, f"runs_root={tmp_path / 'runs'}"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
        assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr


def test_evaluate_refuses_an_edited_options_json_and_keeps_earlier_evaluations(bilm_files, tmp_path):
    """The same weights read through an options.json edited in place are another biLM: refused in one
    error naming the file, before anything is written; an evaluation of other inputs never overwrites
    an earlier one."""
    import shutil

    from suite_common.errors import WeightsError

    o, w = bilm_files
    options = tmp_path / "options.json"
    shutil.copy(o, options)
    cfg = tiny_ner_cfg((options, w), tmp_path, "elmo.position=input")
    out = tmp_path / "run"
    out.mkdir()
    runner.train(as_run(cfg), out)
    ev = compose_cfg(["mode=evaluate", f"checkpoint={out}", f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}"])
    first = trained_runs.evaluate(as_run(ev), out)
    written = Path(first["prediction_file"]).parent
    saved = (written / "eval_results.json").read_bytes()
    edited = json.loads(options.read_text())
    edited["lstm"]["proj_clip"] = 1.0  # the same weights, read another way
    options.write_text(json.dumps(edited))
    with pytest.raises(WeightsError, match="not the options.json this model was trained with"):
        trained_runs.evaluate(as_run(ev), out)
    assert (written / "eval_results.json").read_bytes() == saved
    # another input (a reader override) beside it, not over it
    assert (
        trained_runs.evaluation_dir(
            out / "best.pt", SAMPLES["ner"] / "ner_tiny.conll", {"encoder": {}, "overrides": {}}
        )
        != written
    )
    assert (written / "eval_results.json").read_bytes() == saved


def test_the_sample_runs_outside_the_checkout_and_its_printed_steps_run_as_printed(bilm_files, tmp_path):
    """``source=sample`` reads the checkout's own files from any working directory, and each line the run prints
    (score a file, the same without ELMo, a table of the runs) runs as printed from there."""
    import shlex
    import subprocess
    import sys

    o, w = bilm_files
    tiny = ["task.model.hidden=[8]", "task.model.word_dim=8", "task.model.char_filters=4"]
    train = [sys.executable, str(REPO / "run.py"), "task=ner", "source=sample", "profile=tiny", *tiny]
    train += [f"encoder.options={o}", f"encoder.weights={w}", f"cache.dir={tmp_path / 'cache'}"]
    done = subprocess.run([*train, f"runs_root={tmp_path / 'runs'}"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = [
        x.split(": ", 1) for x in done.stdout.splitlines() if x.startswith(("score a file", "the same", "a table"))
    ]
    assert [name for name, _ in steps] == ["score a file with it", "the same without ELMo", "a table of the runs"]
    for name, line in steps:
        command = shlex.split(line)
        assert command[1] == str(REPO / "run.py") or command[1] == "-m", command
        ran = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert ran.returncode == 0, (name, ran.stderr[-2000:])
    assert len(list(tmp_path.glob("tables-*/table1.md"))) == 1  # the table folder of this biLM's own
