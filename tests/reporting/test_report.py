"""The report on a synthetic directory of results.json records: tables, figures, footers and options
(which records join which cell: test_report_cells.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from report_records import has_cell, write_record

from reporting import figures, report


def test_tables_mean_std_missing_seeds_and_error_reduction(tmp_path):
    runs = tmp_path / "runs"
    for seed, v in enumerate([80.0, 82.0, 84.0]):
        write_record(runs, "ner", "baseline", seed, v)
    for seed, v in enumerate([90.0, 91.0]):  # one ELMo seed missing
        write_record(runs, "ner", "elmo", seed, v)
    write_record(runs, "sst", "baseline", 0, 50.0)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert has_cell(t1, "82.00", 3)  # mean and sample std of 80, 82, 84
    assert has_cell(t1, "90.50", 2)  # the missing seed shows as n=2, not averaged away
    # relative error reduction: (90.5 - 82) / (100 - 82) = 47.2%
    assert "+8.50 / 47.2%" in t1
    assert "— (n=0)" in t1  # SST has no ELMo run
    assert "90.15 / 92.22" in t1 and "+2.07 / 21.0%" in t1  # the paper's NER row: "2.06 / 21%" in its Table 1
    assert "nan" not in t1
    csv = (tmp_path / "out" / "table1.csv").read_text()
    assert csv.count("\n") == 3  # header + ner + sst
    assert (tmp_path / "out" / "table1.tex").read_text().startswith("\\begin{tabular}")


def test_duplicate_records_count_once_per_setting(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0)
    dup = runs / "copy"
    dup.mkdir()
    (dup / "results.json").write_text((runs / "ner" / "baseline-0-1.0" / "results.json").read_text())
    assert len(report.load_runs([runs])) == 1


def test_one_seed_of_a_cell_is_one_run_the_latest_counts(tmp_path):
    """Two records of one cell and seed under other identities (another code version) are not two seeds:
    the later one counts, the earlier is an extra with the reason."""
    import json

    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, date="2026-11-21T10:00:00+00:00")
    write_record(runs, "ner", "baseline", 1, 82.0)
    write_record(runs, "ner", "baseline", 0, 70.0, fraction=0.5, date="2026-11-22T10:00:00+00:00")
    rerun = runs / "ner" / "baseline-0-0.5" / "results.json"
    data = json.loads(rerun.read_text())
    data["config"]["data"]["fraction"], data["config_hash"] = 1.0, "another code version"
    rerun.write_text(json.dumps(data))
    extras = {}
    df = report.load_runs([runs], None, extras)
    assert sorted(zip(df.seed, df.value)) == [(0, 70.0), (1, 82.0)]
    assert list(extras) == [str(runs / "ner" / "baseline-0-1.0" / "results.json")]
    reason = extras[str(runs / "ner" / "baseline-0-1.0" / "results.json")][1]
    assert list(reason) == ["seed (one run per seed and cell: a later record of this cell and seed counts)"]


def test_figures_are_written(tmp_path):
    runs = tmp_path / "runs"
    for frac in (0.01, 0.1, 1.0):
        for seed in range(2):
            write_record(runs, "nli", "baseline", seed, 60 + 20 * frac + seed, fraction=frac, position="both")
            write_record(runs, "nli", "elmo", seed, 70 + 15 * frac + seed, fraction=frac, position="both")
    write_record(runs, "srl", "elmo", 0, 70.0, s_in=(0.1, 0.7, 0.2))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--collect"])
    (tmp_path / "out" / "layer_weights.png").write_bytes(b"an older report's figure")
    stored = json.loads((tmp_path / "out" / "report.json").read_text())
    del stored["made"]  # a folder of a report that kept no list of what it made
    (tmp_path / "out" / "report.json").write_text(json.dumps(stored))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--collect"])
    assert not (tmp_path / "out" / "layer_weights.png").exists()  # replaced by the name that says whose it is
    for name in (
        "layer_weights_no-biLM_quick.png",
        "sample_efficiency_no-biLM_quick.png",
    ):  # hand-made records: no biLM hash
        data = (tmp_path / "out" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert len(list((tmp_path / "out" / "runs").glob("**/results.json"))) == 13


def test_no_runs_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no results.json"):
        report.main(["--runs", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])


def test_probes_table(tmp_path):
    runs = tmp_path / "runs" / "probe_pos" / "x"
    runs.mkdir(parents=True)
    (runs / "results.json").write_text(
        json.dumps(
            {
                "record_version": 2,
                "task": "probe_pos",
                "config_hash": "p",
                "date": "2026-11-21T10:00:00+00:00",
                "config": {},
                "dev": {"accuracy_per_layer": {"0": 90.0, "1": 95.5, "2": 94.0, "mix": 96.0}},
            }
        )
    )
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")])
    md = (tmp_path / "out" / "probes.md").read_text()
    assert "95.50 (n=1)" in md and "97.3" in md and "PTB WSJ 10% sample" in md


def test_tables_use_each_tasks_largest_training_set(tmp_path):
    runs = tmp_path / "runs"
    for fraction, v in ((0.01, 10.0), (0.1, 40.0)):  # a quick profile that trains QA on 10% at most
        write_record(runs, "qa", "baseline", 0, v, fraction=fraction)
        write_record(runs, "qa", "elmo", 0, v + 5, fraction=fraction)
    write_record(runs, "ner", "baseline", 0, 70.0, fraction=0.1)
    write_record(runs, "ner", "baseline", 1, 80.0)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "40.00 (n=1)" in t1 and "45.00 (n=1)" in t1 and "10.00" not in t1
    assert "80.00 (n=1)" in t1 and "70.00" not in t1  # NER's 10% run belongs to Figure 1 only


def test_ablation_tables_add_tasks_the_paper_did_not_ablate(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "qa", "input", 0, 60.0)
    write_record(runs, "ner", "both", 0, 75.0)
    write_record(runs, "sst", "baseline", 0, 40.0)  # a baseline alone does not make a row
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    lines = (tmp_path / "out" / "table3.md").read_text().splitlines()
    rows = [line for line in lines if line.startswith("| qa") or line.startswith("| ner") or line.startswith("| sst")]
    assert [r.split("|")[1].strip() for r in rows] == ["qa", "ner"]
    assert "75.00 (n=1)" in rows[1] and rows[1].count("—") >= 2


def test_each_table_names_the_commands_hardware_and_dates_behind_it(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, command="python run.py -m A", date="2026-11-21T10:00:00+00:00")
    write_record(runs, "ner", "elmo", 0, 85.0, command="python run.py -m A", date="2026-11-21T11:00:00+00:00")
    write_record(runs, "ner", "elmo", 1, 86.0, command="python run.py -m B", date="2026-11-21T12:00:00+00:00")
    write_record(runs, "ner", "last_only", 0, 84.0, command="python run.py -m C", date="2026-11-21T13:00:00+00:00")
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "3 run records, 2026-11-21T10:00:00+00:00 to 2026-11-21T12:00:00+00:00" in t1
    assert "- `python run.py -m A` (2 runs)" in t1 and "- `python run.py -m B` (1 run)" in t1
    assert "-m C" not in t1 and "x86_64, 2 CPUs, 1 torch thread(s), cpu" in t1
    assert "- `python run.py -m C` (1 run)" in (tmp_path / "out" / "table2.md").read_text()
    # records that name their processor (seeded runs repeat to the last digit only on the same model)
    record = runs / "ner" / "elmo-1-1.0" / "results.json"
    saved = json.loads(record.read_text())
    saved["hardware"]["cpu"] = "Intel(R) Xeon(R) Processor"
    record.write_text(json.dumps(saved))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "again")])
    t1 = (tmp_path / "again" / "table1.md").read_text()
    assert "x86_64 Intel(R) Xeon(R) Processor, 2 CPUs, 1 torch thread(s), cpu" in t1
    assert "x86_64, 2 CPUs, 1 torch thread(s), cpu" in t1  # the records without it, as before


def write_finetune_record(runs, task: str, before: float, after: float, seed: int = 0):
    d = runs / task / ("finetune" if seed == 0 else f"finetune_seed{seed}")
    d.mkdir(parents=True)
    finetune = {"dir": f".cache/finetuned/{task}-{seed}", "dev_perplexity_before": before, "tokens": 1000}
    record = {
        "record_version": 2,
        "task": task,
        "command": f"python run.py mode=finetune task={task}",
        "date": "2026-11-21T10:00:00+00:00",
        "profile": "quick",
        "config": {},
        "hardware": {"machine": "x86_64", "cpus": 2},
        "bilm_finetune": {**finetune, "dev_perplexity_after": after, "seed": seed},
    }
    (d / "finetune.json").write_text(json.dumps(record))


def test_table7_from_finetune_records_and_collect(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 70.0)
    for task, before, after in (("sst", 900.0, 300.0), ("ner", 323.5, 154.3)):
        write_finetune_record(runs, task, before, after)
    out = tmp_path / "out"
    report.main(["--runs", str(runs), "--out", str(out), "--collect"])
    t7 = (out / "table7.md").read_text()
    rows = [line for line in t7.splitlines() if line.startswith("| ner") or line.startswith("| sst")]
    assert "323.5 → 154.3" in rows[0] and "103.2 → 46.3" in rows[0] and "900.0 → 300.0" in rows[1]  # paper order
    assert "- `python run.py mode=finetune task=sst` (1 run)" in t7
    assert (out / "runs" / "sst" / "finetune" / "finetune.json").exists()


def test_table7_gives_a_task_fine_tuned_with_several_seeds_one_row_with_the_mean_and_range(tmp_path):
    """``encoder.finetune_seed``: the fine-tunings of one task on one text differ only by their seed; the
    row gives their mean after-perplexity, its range and their number; a task fine-tuned once keeps its form.
    A runs root of fine-tunings alone (a ``mode=finetune`` sweep) is reported: Table 7 only."""
    runs = tmp_path / "runs"
    for seed, after in enumerate((291.3, 214.3, 220.8)):
        write_finetune_record(runs, "ner", 347.4, after, seed)
    write_finetune_record(runs, "sst", 900.0, 300.0)
    out = tmp_path / "out"
    report.main(["--runs", str(runs), "--out", str(out), "--collect"])
    rows = [line for line in (out / "table7.md").read_text().splitlines() if line.startswith(("| ner", "| sst"))]
    assert len(rows) == 2
    assert not (out / "table1.md").exists()
    assert "347.4 → 242.1 (214.3-291.3, 3 fine-tunings)" in rows[0] and "| 900.0 → 300.0  " in rows[1]


def test_figure1_never_mixes_the_equal_updates_rule_with_older_small_fraction_runs(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    for seed in range(2):
        write_record(runs, "nli", "baseline", seed, 80.0, position="both")
        write_record(runs / "old", "nli", "baseline", seed, 40.0, fraction=0.1, position="both")  # one pass per epoch
        write_record(runs / "new", "nli", "baseline", seed, 60.0, fraction=0.1, position="both")
    for path in (runs / "new").glob("**/results.json"):
        r = json.loads(path.read_text())
        r["config"]["trainer"] = {"equal_updates": True}
        r["config_hash"] += "eq"
        path.write_text(json.dumps(r))
    plotted = {}

    def spy(x, y, **kw):
        plotted[kw.get("label")] = list(y)

    import matplotlib.axes

    monkeypatch.setattr(matplotlib.axes.Axes, "errorbar", lambda self, x, y, **kw: spy(x, y, **kw))
    figures.sample_efficiency_figure(report.load_runs([runs]), tmp_path / "f.png")
    assert plotted["baseline (n=2)"] == [60.0, 80.0]  # the 40.0 runs of the older rule are left out


def test_split_test_adds_the_test_metric_beside_dev(tmp_path):
    """A run with a test file scores it once; --split test shows it beside dev (selection stays on dev)."""
    for seed, dev in enumerate((70.0, 72.0)):  # test: dev - 2 - seed, written below
        write_record(tmp_path / "runs", "ner", "elmo", seed, dev)
    write_record(tmp_path / "runs", "ner", "baseline", 0, 60.0)
    for path in (tmp_path / "runs").glob("ner/elmo-*/results.json"):
        r = json.loads(path.read_text())
        r["test"] = {"f1": r["dev"]["f1"] - 2 - r["config"]["seed"]}  # 68, 69
        path.write_text(json.dumps(r))
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--split", "test"])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "ELMo (ours, test)" in t1 and has_cell(t1, "68.50", 2) and has_cell(t1, "71.00", 2)
    assert "— (n=0)" in t1  # the baseline has no test metric
    assert "--split test`" in t1
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "dev_only")])
    assert "(ours, test)" not in (tmp_path / "dev_only" / "table1.md").read_text()


def test_split_test_without_any_test_metric_says_so_and_shows_dev_only(tmp_path, capsys):
    write_record(tmp_path / "runs", "ner", "elmo", 0, 70.0)
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--split", "test"])
    assert "no record has a test metric" in capsys.readouterr().out
    assert "(ours, test)" not in (tmp_path / "out" / "table1.md").read_text()


def test_figures_name_the_data_the_seeds_and_mark_cells_by_their_printed_value(tmp_path, monkeypatch):
    import matplotlib.axes
    import matplotlib.figure

    runs = tmp_path / "runs"
    for seed in range(2):  # weights 0.3329 and 0.3336 both print as 0.33: neither is hatched; 0.22 is
        write_record(runs, "nli", "elmo", seed, 70.0, s_in=(0.3329, 0.3336, 0.3335), position="both")
        write_record(runs, "srl", "elmo", seed, 70.0, s_in=(0.22, 0.43, 0.35))
    patches, titles, ticks = [], [], []
    monkeypatch.setattr(matplotlib.axes.Axes, "add_patch", lambda self, p: patches.append(p))
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", lambda self, t, **kw: titles.append(t))
    real = matplotlib.axes.Axes.set_yticks
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "set_yticks",
        lambda self, t, labels=None, **kw: (ticks.extend(labels or []), real(self, t, labels, **kw)),
    )
    figures.layer_weights_figure(report.load_runs([runs]), tmp_path / "w.png")
    assert len(patches) == 1  # only SRL's 0.22
    assert "SICK (n=2)" in ticks and "SRL (Universal PropBank) (n=2)" in ticks
    assert "quick profile" in titles[0] and "biLM:" in titles[0]


def test_a_file_that_is_not_a_run_record_stops_the_report_with_one_line_naming_it(tmp_path):
    write_record(tmp_path / "runs", "ner", "elmo", 0, 70.0)
    bad = tmp_path / "runs" / "ner" / "broken" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"task": "ner", "dev": ')  # a partial file
    out = subprocess.run(
        [sys.executable, "-m", "reporting.report", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert out.returncode == 1 and out.stderr.strip().splitlines() == [
        f"error: {bad}: unreadable run record (JSONDecodeError: Expecting value: line 1 column 24 (char 23))"
    ]
    assert not (tmp_path / "out" / "table1.md").exists()


def test_a_table_directory_keeps_its_options_and_rebuilds_to_the_same_bytes(tmp_path, monkeypatch):
    """The committed tables rebuild byte-identically from their own directory (the options
    they were built with, such as ``--accept elmo.dropout``, are in its report.json); other options are
    refused; the default report reads ``outputs/runs`` into ``outputs/tables`` and never writes ``results/``."""
    import shutil

    from conftest import REPO
    from documented_commands import committed_rebuilds, reports_of_committed_records

    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "results", tmp_path / "results", ignore=shutil.ignore_patterns("*.png"))
    shutil.copytree(REPO / "conf", tmp_path / "conf")
    monkeypatch.setattr("reporting.cell_rules.CONF", tmp_path / "conf")
    before = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file()}
    directories = sorted(str(p.parent.relative_to(tmp_path)) for p in (tmp_path / "results").glob("**/report.json"))
    assert {"results/small", "results/history/paper_small-v2"} <= set(directories)
    rebuilds = committed_rebuilds()  # the documents' rebuild commands (test_readme_commands leaves them here)
    assert set(rebuilds) <= set(directories)
    for out in directories:  # every committed table directory, from its own records: as documented, else --collect
        report.main(rebuilds.get(out, ["--out", out, "--collect"]))
    after = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file() and p.suffix != ".png"}
    changed = sorted(str(p.relative_to(tmp_path)) for p in after if before.get(p) != after[p])
    assert not changed
    for k, args in enumerate(reports_of_committed_records()):  # the documented others (--split test), here
        out = tmp_path / f"documented_{k}"  # where every record's answers are known already
        report.main([*args[: args.index("--out") + 1], str(out), *args[args.index("--out") + 2 :]])
        assert (out / "table1.md").is_file(), args
    with pytest.raises(
        SystemExit, match=r"small-v1_quick was built with --accept \['elmo.dropout', .*\], not \['task.model'\]"
    ):
        report.main(["--out", "results/history/small-v1_quick", "--accept", "task.model"])
    with pytest.raises(SystemExit, match="no results.json under outputs/runs"):
        report.main(["--collect"])
    assert not (tmp_path / "outputs" / "tables").exists() or not any((tmp_path / "outputs" / "tables").iterdir())


def test_footers_write_the_runs_root_as_RUNS_and_the_cache_directory_as_CACHE():
    """Where a record's runs and cache were kept is not what it is: footers name them ``RUNS`` and ``CACHE``."""
    assert report.general_paths("python run.py task=ner seed=0 runs_root=/work/x/y threads=1 cache.dir=/c/a") == (
        "python run.py task=ner seed=0 runs_root=RUNS threads=1 cache.dir=CACHE"
    )
    assert report.general_paths("python run.py task=ner my_runs_root=/a +cache.dir=/b") == (
        "python run.py task=ner my_runs_root=/a +cache.dir=CACHE"
    )


def test_footers_say_which_python_and_the_summary_counts_records_once(tmp_path, capsys):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, command="python run.py task=ner +ablation=baseline")
    write_record(runs, "ner", "elmo", 0, 85.0, command="python run.py task=ner +ablation=elmo")
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    assert "`python`: the checkout's `.venv/bin/python`" in (tmp_path / "out" / "table1.md").read_text()
    assert "2 task run records" in capsys.readouterr().out


def test_a_table_of_runs_on_part_of_the_data_says_how_much(tmp_path):
    runs = tmp_path / "runs"
    for seed in (0, 1):
        write_record(runs, "nli", "baseline", seed, 60.0 + seed, fraction=0.05)
        write_record(runs, "nli", "elmo", seed, 65.0 + seed, fraction=0.05)
    for path in runs.glob("**/results.json"):
        data = json.loads(path.read_text())
        data["train_examples"] = 222
        path.write_text(json.dumps(data))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    row = next(line for line in (tmp_path / "out/table1.md").read_text().splitlines() if line.startswith("- nli"))
    assert "SICK (4,439 training pairs)" in row  # the data set, and what these cells used of it
    assert "these cells trained on 5% of the training data (222 training examples)" in row


def test_table1_md_opens_with_a_table_a_terminal_shows_and_keeps_every_column_below(tmp_path):
    """Table 1's first table is at most 120 characters wide (each cell's mean and seeds, the gain with its
    interval over seeds, the bootstrap's p, the paper's gain); the details table and the notes below it hold
    every other column of the .csv."""
    runs = tmp_path / "runs"
    for task, base, elmo in (("coref", 40.0, 41.5), ("ner", 66.0, 82.0), ("nli", 75.0, 79.0)):
        for seed in (0, 1, 2):
            write_record(runs, task, "baseline", seed, base + seed)
            write_record(runs, task, "elmo", seed, elmo + 0.5 * seed)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "table1.md").read_text()
    first = text.split("\n\n")[1].splitlines()
    assert first[0].startswith("| task (metric)") and len(first) == 2 + 3
    assert max(map(len, first)) <= 120, max(first, key=len)
    ner = next(line for line in first if line.startswith("| ner (f1) "))
    cells = [c.strip() for c in ner.split("|")[1:-1]]
    assert cells[1:3] == ["67.00 (n=3)", "82.50 (n=3)"] and cells[3].startswith("+15.50 [") and cells[5] == "+2.07"
    assert "coref (conll_f1)" in text and "≈0" not in ner
    csv = pd.read_csv(tmp_path / "out" / "table1.csv", dtype=str, keep_default_na=False)
    for column in csv.columns.drop(["task", "increase: 95% interval over seeds"]):
        assert all(value in text for value in csv[column]), column  # every detail is in the .md
