"""A rerun of a finished configuration answers like the first run: its dev metric and the command
that scores a file with its model (`make demo` twice)."""

from conftest import REPO, SAMPLES
from hydra import compose, initialize_config_dir

from experiments import next_steps, runner
from experiments.run_config import as_run


def test_a_skipped_run_prints_its_metric_and_evaluate_line(bilm_files, tmp_path, capsys):
    o, w = bilm_files
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "task=ner",
                f"data.dir={SAMPLES['ner']}",
                "data.train_file=ner_tiny.conll",
                "data.dev_file=ner_tiny.conll",
                f"encoder.options={o}",
                f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}",
                "trainer.max_epochs=1",
                "trainer.min_updates=0",
                "task.model.hidden=[8]",
                "task.model.char_filters=4",
                "task.model.word_dim=8",
                f"runs_root={tmp_path}",
            ],
        )
    out = tmp_path / "run"
    out.mkdir()
    first = runner.train(as_run(cfg), out)
    fresh = capsys.readouterr().out
    assert not (out / "running.pid").exists()  # a finished run drops its marker
    again = runner.train(as_run(cfg), out)
    skipped = capsys.readouterr().out
    assert again["dev"] == first["dev"] and "skipping" in skipped
    line = f"dev f1: {first['dev']['f1']:.2f}"
    evaluate = (
        f"score a file with it: {next_steps.python_command()} run.py mode=evaluate checkpoint={out} data.test_path="
    )
    assert line in fresh and evaluate in fresh and line in skipped and evaluate in skipped
    assert "(re-scored from its kept predictions)" in skipped  # the reused number is checked, not taken on trust

    import json

    record = json.loads((out / "results.json").read_text())
    record["dev"]["f1"] = 77.0  # edited after the run: the rerun shows what the predictions give, and says so
    (out / "results.json").write_text(json.dumps(record))
    runner.train(as_run(cfg), out)
    edited = capsys.readouterr().out
    assert f"dev f1: {first['dev']['f1']:.2f} (re-scored from its kept predictions; its record says 77.0" in edited


def test_the_data_line_says_how_much_of_the_training_set_a_fraction_uses(tmp_path):
    from run_configs import run_tiny_ner

    done = run_tiny_ner(tmp_path, "elmo.position=none", "data.fraction=0.5", "trainer.max_epochs=1",
                        "trainer.min_updates=0", "task.model.hidden=[8]", "task.model.char_filters=4",
                        "task.model.word_dim=8")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("data: "))
    total = int(line.split('"sentences": ')[1].split(",")[0].split("}")[0])
    assert line.endswith(f"; training on {-(-total // 2):,} of them (data.fraction=0.5)"), line
