"""The report on a synthetic directory of results.json records."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reporting import figures, report


def _record(
    root,
    task,
    setting,
    seed,
    value,
    fraction=1.0,
    s_in=(0.2, 0.5, 0.3),
    position="input",
    command="python run.py -m task=ner",
    date="2026-11-21T10:00:00+00:00",
    profile="quick",
    **elmo,
):
    metric = "f1" if task in ("ner", "srl", "qa") else "accuracy"
    r = {
        "task": task,
        "metric": metric,
        "dev": {metric: value},
        "ablation": setting,
        "profile": profile,
        "command": command,
        "date": date,
        "hardware": {"machine": "x86_64", "cpus": 2, "torch_threads": 1, "device": "cpu"},
        "elmo_position": "none" if setting == "baseline" else position,
        "config_hash": f"{task}{setting}{seed}{fraction}",
        "mixing_weights": {} if setting == "baseline" else {"input": {"s": list(s_in), "gamma": 1.0}},
        "config": {
            "seed": seed,
            "data": {"fraction": fraction},
            "task": {"elmo_position": position},
            "elmo": {"position": "paper", "mix": "all", "l2": 0.1, **elmo},
        },
    }
    if elmo.get("finetune"):
        r["bilm_finetune"] = {"dev_perplexity_before": 300.0, "dev_perplexity_after": 150.0}
    d = (
        root
        / task
        / "-".join(map(str, [setting, seed, fraction, *elmo.values()] + ([profile] if profile != "quick" else [])))
    )
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps(r))


def test_tables_mean_std_missing_seeds_and_error_reduction(tmp_path):
    runs = tmp_path / "runs"
    for seed, v in enumerate([80.0, 82.0, 84.0]):
        _record(runs, "ner", "baseline", seed, v)
    for seed, v in enumerate([90.0, 91.0]):  # one ELMo seed missing
        _record(runs, "ner", "elmo", seed, v)
    _record(runs, "sst", "baseline", 0, 50.0)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "82.00 ± 2.00 (n=3)" in t1  # mean and sample std of 80, 82, 84
    assert "90.50 ± 0.71 (n=2)" in t1  # the missing seed shows as n=2, not averaged away
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
    _record(runs, "ner", "baseline", 0, 80.0)
    dup = runs / "copy"
    dup.mkdir()
    (dup / "results.json").write_text((runs / "ner" / "baseline-0-1.0" / "results.json").read_text())
    assert len(report.load_runs([runs])) == 1


def test_figures_are_written(tmp_path):
    runs = tmp_path / "runs"
    for frac in (0.01, 0.1, 1.0):
        for seed in range(2):
            _record(runs, "nli", "baseline", seed, 60 + 20 * frac + seed, fraction=frac, position="both")
            _record(runs, "nli", "elmo", seed, 70 + 15 * frac + seed, fraction=frac, position="both")
    _record(runs, "srl", "elmo", 0, 70.0, s_in=(0.1, 0.7, 0.2))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--collect"])
    (tmp_path / "out" / "layer_weights.png").write_bytes(b"an older report's figure")
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
                "task": "probe_pos",
                "config_hash": "p",
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
        _record(runs, "qa", "baseline", 0, v, fraction=fraction)
        _record(runs, "qa", "elmo", 0, v + 5, fraction=fraction)
    _record(runs, "ner", "baseline", 0, 70.0, fraction=0.1)
    _record(runs, "ner", "baseline", 1, 80.0)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "40.00 (n=1)" in t1 and "45.00 (n=1)" in t1 and "10.00" not in t1
    assert "80.00 (n=1)" in t1 and "70.00" not in t1  # NER's 10% run belongs to Figure 1 only


def test_ablation_tables_add_tasks_the_paper_did_not_ablate(tmp_path):
    runs = tmp_path / "runs"
    _record(runs, "qa", "input", 0, 60.0)
    _record(runs, "ner", "both", 0, 75.0)
    _record(runs, "sst", "baseline", 0, 40.0)  # a baseline alone does not make a row
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    lines = (tmp_path / "out" / "table3.md").read_text().splitlines()
    rows = [line for line in lines if line.startswith("| qa") or line.startswith("| ner") or line.startswith("| sst")]
    assert [r.split("|")[1].strip() for r in rows] == ["qa", "ner"]
    assert "75.00 (n=1)" in rows[1] and rows[1].count("—") >= 2


def test_each_table_names_the_commands_hardware_and_dates_behind_it(tmp_path):
    runs = tmp_path / "runs"
    _record(runs, "ner", "baseline", 0, 80.0, command="python run.py -m A", date="2026-11-21T10:00:00+00:00")
    _record(runs, "ner", "elmo", 0, 85.0, command="python run.py -m A", date="2026-11-21T11:00:00+00:00")
    _record(runs, "ner", "elmo", 1, 86.0, command="python run.py -m B", date="2026-11-21T12:00:00+00:00")
    _record(runs, "ner", "last_only", 0, 84.0, command="python run.py -m C", date="2026-11-21T13:00:00+00:00")
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


def test_state_policy_and_finetuned_runs_are_variants_not_averaged_in(tmp_path):
    runs = tmp_path / "runs"
    _record(runs, "ner", "baseline", 0, 70.0)
    _record(runs, "ner", "elmo", 0, 80.0)
    _record(runs, "ner", "elmo", 1, 82.0)
    _record(runs, "ner", "elmo", 0, 83.0, state="stateful_warmup")
    _record(runs, "ner", "elmo", 0, 86.0, finetune=True)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    assert "81.00 ± 1.41 (n=2)" in (tmp_path / "out" / "table1.md").read_text()  # the variants stay out
    variants = (tmp_path / "out" / "variants.md").read_text()
    state_row = next(line for line in variants.splitlines() if "state=stateful_warmup" in line)
    assert "83.00 (n=1)" in state_row and "80.00 (n=1)" in state_row and "+3.00 points" in state_row
    tuned_row = next(line for line in variants.splitlines() if "finetuned biLM" in line)
    assert "+6.00 points" in tuned_row and "300.0 → 150.0" in tuned_row


def test_table7_from_finetune_records_and_collect(tmp_path):
    runs = tmp_path / "runs"
    _record(runs, "ner", "baseline", 0, 70.0)
    for task, before, after in (("sst", 900.0, 300.0), ("ner", 323.5, 154.3)):
        d = runs / task / "finetune"
        d.mkdir(parents=True)
        (d / "finetune.json").write_text(
            json.dumps(
                {
                    "task": task,
                    "command": f"python run.py mode=finetune task={task}",
                    "date": "2026-11-21T10:00:00+00:00",
                    "profile": "quick",
                    "config": {},
                    "hardware": {"machine": "x86_64", "cpus": 2},
                    "bilm_finetune": {
                        "dir": f".cache/finetuned/{task}",
                        "dev_perplexity_before": before,
                        "dev_perplexity_after": after,
                        "tokens": 1000,
                    },
                }
            )
        )
    out = tmp_path / "out"
    report.main(["--runs", str(runs), "--out", str(out), "--collect"])
    t7 = (out / "table7.md").read_text()
    rows = [line for line in t7.splitlines() if line.startswith("| ner") or line.startswith("| sst")]
    assert "323.5 → 154.3" in rows[0] and "103.2 → 46.3" in rows[0] and "900.0 → 300.0" in rows[1]  # paper order
    assert "- `python run.py mode=finetune task=sst` (1 run)" in t7
    assert (out / "runs" / "sst" / "finetune" / "finetune.json").exists()


def test_runs_of_different_profiles_are_never_averaged_together(tmp_path):
    runs = tmp_path / "runs"
    _record(runs, "ner", "baseline", 0, 60.0)
    _record(runs, "ner", "elmo", 0, 70.0)
    _record(runs, "ner", "baseline", 0, 90.0, profile="paper")
    _record(runs, "ner", "elmo", 0, 92.0, profile="paper")
    with pytest.raises(SystemExit, match=r"several profiles: paper \(2 records\), quick \(2 records\)"):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--profile", "paper"])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "— paper profile" in t1 and "90.00 (n=1)" in t1 and "92.00 (n=1)" in t1
    assert "60.00" not in t1 and "70.00" not in t1
    with pytest.raises(SystemExit, match="no runs with profile 'full'"):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out_full"), "--profile", "full"])
    with pytest.raises(SystemExit, match=r"out was built with --profile 'paper', not 'full'"):  # its own options only
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--profile", "full"])


def _with_bilm(path, sha):
    r = json.loads(path.read_text())
    r["identity"] = {"bilm_sha256": None if r["elmo_position"] == "none" else sha, "data_sha256": {}, "task_version": 1}
    r["bilm"] = {"sha256": sha}
    path.write_text(json.dumps(r))


def test_runs_of_different_biLMs_are_never_averaged_or_collected_together(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for root, sha, value in ((old, "a" * 64, 70.0), (new, "b" * 64, 75.0)):
        _record(root, "ner", "baseline", 0, 60.0)
        _record(root, "ner", "elmo", 0, value)
        for path in root.glob("**/results.json"):
            _with_bilm(path, sha)
    both = ["--runs", str(old), str(new), "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit, match=r"several biLMs: aaaaaaaaaaaa \(1 records\), bbbbbbbbbbbb \(1 records\)"):
        report.main(both)
    report.main(both + ["--bilm", "bbbb", "--collect"])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "75.00 (n=1)" in t1 and "70.00" not in t1 and "60.00 (n=1)" in t1  # the baseline goes with either
    assert "biLM: bbbbbbbbbbbb" in t1
    # never over the new biLM's tables: the directory keeps --bilm bbbb, so the old runs match nothing there,
    # and asking for the old biLM there is refused
    with pytest.raises(SystemExit, match="matches 0 biLMs"):
        report.main(["--runs", str(old), "--out", str(tmp_path / "out"), "--collect"])
    with pytest.raises(SystemExit, match=r"out was built with --bilm 'bbbb', not 'aaaa'"):
        report.main(["--runs", str(old), "--out", str(tmp_path / "out"), "--bilm", "aaaa"])
    from reporting.report import collect  # records of two identities in one place: both kept

    for path in sorted(old.glob("**/results.json")):
        collect(path, old, tmp_path / "out" / "runs")
    collected = sorted(p.parent.name for p in (tmp_path / "out" / "runs" / "ner").glob("*/results.json"))
    assert len(collected) == 3 and sum("@" in name for name in collected) == 1  # both ELMo records kept
    with pytest.raises(SystemExit, match="matches 0 biLMs"):
        report.main(["--runs", str(old), str(new), "--out", str(tmp_path / "elsewhere"), "--bilm", "cccc"])


def _bert_record(root, task, seed, value, model="/x/bert_core/pretrained/small", sha="b" * 64, layers=None):
    _record(root / "bert", task, "elmo", seed, value)
    path = next((root / "bert" / task).glob(f"elmo-{seed}-*/results.json"))
    r = json.loads(path.read_text())
    r["identity"] = {"bilm_sha256": None, "encoder_sha256": sha, "data_sha256": {}, "task_version": 1}
    r["bilm"] = {"kind": "transformer", "model": model, "sha256": sha}
    r["config"]["encoder"] = {"kind": "transformer", "pooling": "first"}
    r["config_hash"] += "bert"
    path.write_text(json.dumps(r))


def test_transformer_runs_go_to_encoders_md_never_into_the_paper_tables(tmp_path):
    runs = tmp_path / "runs"
    for seed, (b, e, t) in enumerate([(80.0, 90.0, 85.0), (82.0, 91.0, 86.0), (84.0, 92.0, 87.0)]):
        _record(runs, "ner", "baseline", seed, b)
        _record(runs, "ner", "elmo", seed, e)
        _bert_record(runs, "ner", seed, t)
    probe = {
        "task": "probe_pos",
        "dev": {"accuracy_per_layer": {"0": 90.0, "1": 94.0, "2": 93.0, "mix": 95.0}},
        "config_hash": "p1",
        "date": "2026-11-21T10:00:00+00:00",
        "profile": "quick",
        "command": "c",
        "config": {"seed": 0, "data": {}, "task": {}, "elmo": {}},
        "elmo_position": "probe",
    }
    (runs / "probe").mkdir()
    (runs / "probe" / "results.json").write_text(json.dumps(probe))
    bert_probe = {
        **probe,
        "config_hash": "p2",
        "dev": {"accuracy_per_layer": {"0": 80.0, "1": 85.0, "4": 88.0}},
        "identity": {"bilm_sha256": None, "encoder_sha256": "b" * 64},
        "bilm": {"model": "/m/tinybert"},
    }
    (runs / "bert_probe").mkdir()
    (runs / "bert_probe" / "results.json").write_text(json.dumps(bert_probe))
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "91.00 ± 1.00 (n=3)" in t1 and "86.00" not in t1  # ELMo cell holds the biLM runs only
    enc = (tmp_path / "out" / "encoders.md").read_text()
    assert "82.00 ± 2.00 (n=3)" in enc and "91.00 ± 1.00 (n=3)" in enc and "86.00 ± 1.00 (n=3)" in enc
    assert "embedded small BERT (bbbbbbbbbbbb, first piece)" in enc
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in enc.splitlines() if line.startswith("| probe_pos")]
    assert ["probe_pos", "4", "—", "88.00"] in rows and ["probe_pos", "1", "94.00", "85.00"] in rows
    probes = (tmp_path / "out" / "probes.md").read_text()
    assert "88.00" not in probes and "94.00" in probes  # probes.md: the biLM's layers only


def test_figure1_never_mixes_the_equal_updates_rule_with_older_small_fraction_runs(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    for seed in range(2):
        _record(runs, "nli", "baseline", seed, 80.0, position="both")
        _record(runs / "old", "nli", "baseline", seed, 40.0, fraction=0.1, position="both")  # one pass per epoch
        _record(runs / "new", "nli", "baseline", seed, 60.0, fraction=0.1, position="both")
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


def test_a_debug_run_beside_committed_records_never_changes_a_cell(tmp_path):
    """A one-epoch run of a committed configuration is listed in extras.md and the
    committed tables (CSV and the Markdown table, footer aside) are unchanged."""
    from conftest import REPO

    committed = REPO / "results" / "small"
    source = next(
        p
        for p in sorted((committed / "runs" / "sst").glob("*/results.json"))
        if json.loads(p.read_text()).get("ablation") == "elmo"
    )
    debug = json.loads(source.read_text())
    debug["config"]["trainer"]["max_epochs"] = 1
    debug.update(config_hash="debug-one-epoch", date="2026-11-23T09:00:00+00:00", dev={"accuracy": 29.43})
    planted = tmp_path / "planted" / "sst" / "+profile:quick+source:local+trainer.max_epochs:1"
    planted.mkdir(parents=True)
    (planted / "results.json").write_text(json.dumps(debug))
    out = tmp_path / "out"
    report.main(["--runs", str(committed / "runs"), str(tmp_path / "planted"), "--out", str(out)])
    for name in ("table1", "table2", "table3"):
        assert (out / f"{name}.csv").read_bytes() == (committed / f"{name}.csv").read_bytes()
        ours, theirs = ((d / f"{name}.md").read_text().split("Rebuilt from")[0] for d in (out, committed))
        assert ours == theirs
    extras = (out / "extras.md").read_text()
    assert "trainer.max_epochs=1 (prescribed 12)" in extras and "29.43" in extras
    assert f"--runs {committed / 'runs'} {tmp_path / 'planted'} --out {out}`" in (out / "table1.md").read_text()


def test_tables_of_another_biLM_are_never_rewritten_in_place(tmp_path):
    old, new = tmp_path / "out" / "runs", tmp_path / "new"
    for root, sha in ((old, "a" * 64), (new, "b" * 64)):
        _record(root, "ner", "elmo", 0, 70.0)
        for path in root.glob("**/results.json"):
            _with_bilm(path, sha)
    with pytest.raises(SystemExit, match=r"holds the tables of other runs \(profile quick, biLM aaaaaaaaaaaa"):
        report.main(["--runs", str(new), "--out", str(tmp_path / "out"), "--collect"])
    assert not (tmp_path / "out" / "table1.md").exists()
    report.main(["--runs", str(new), "--out", str(tmp_path / "elsewhere")])
    assert f"--runs {new} --out {tmp_path / 'elsewhere'}`" in (tmp_path / "elsewhere" / "table1.md").read_text()


def test_split_test_adds_the_test_metric_beside_dev(tmp_path):
    """A run with a test file scores it once; --split test shows it beside dev (selection stays on dev)."""
    for seed, dev in enumerate((70.0, 72.0)):  # test: dev - 2 - seed, written below
        _record(tmp_path / "runs", "ner", "elmo", seed, dev)
    _record(tmp_path / "runs", "ner", "baseline", 0, 60.0)
    for path in (tmp_path / "runs").glob("ner/elmo-*/results.json"):
        r = json.loads(path.read_text())
        r["test"] = {"f1": r["dev"]["f1"] - 2 - r["config"]["seed"]}  # 68, 69
        path.write_text(json.dumps(r))
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--split", "test"])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "ELMo (ours, test)" in t1 and "68.50 ± 0.71 (n=2)" in t1 and "71.00 ± 1.41 (n=2)" in t1
    assert "— (n=0)" in t1  # the baseline has no test metric
    assert "--split test`" in t1
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "dev_only")])
    assert "(ours, test)" not in (tmp_path / "dev_only" / "table1.md").read_text()


def test_split_test_without_any_test_metric_says_so_and_shows_dev_only(tmp_path, capsys):
    _record(tmp_path / "runs", "ner", "elmo", 0, 70.0)
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--split", "test"])
    assert "no record has a test metric" in capsys.readouterr().out
    assert "(ours, test)" not in (tmp_path / "out" / "table1.md").read_text()


def test_figures_name_the_data_the_seeds_and_mark_cells_by_their_printed_value(tmp_path, monkeypatch):
    import matplotlib.axes
    import matplotlib.figure

    runs = tmp_path / "runs"
    for seed in range(2):  # weights 0.3329 and 0.3336 both print as 0.33: neither is hatched; 0.22 is
        _record(runs, "nli", "elmo", seed, 70.0, s_in=(0.3329, 0.3336, 0.3335), position="both")
        _record(runs, "srl", "elmo", seed, 70.0, s_in=(0.22, 0.43, 0.35))
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


def test_accepted_keys_let_deliberate_variations_into_the_tables(tmp_path):
    from conftest import REPO

    source = next(
        p
        for p in sorted((REPO / "results" / "small" / "runs" / "ner").glob("*/results.json"))
        if json.loads(p.read_text()).get("ablation") == "elmo" and "transformer" not in p.parent.name
    )
    r = json.loads(source.read_text())
    r["config"]["trainer"]["max_epochs"] = 1
    (tmp_path / "runs" / "ner" / "x").mkdir(parents=True)
    (tmp_path / "runs" / "ner" / "x" / "results.json").write_text(json.dumps(r))
    with pytest.raises(SystemExit, match="every record below .* differs from what its profile prescribes"):
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "a")])
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "b"), "--accept", "trainer.max_epochs"])
    t1 = (tmp_path / "b" / "table1.md").read_text()
    assert "(runs may differ from it in: trainer.max_epochs)" in t1 and "--accept trainer.max_epochs`" in t1


def test_a_file_that_is_not_a_run_record_stops_the_report_with_one_line_naming_it(tmp_path):
    _record(tmp_path / "runs", "ner", "elmo", 0, 70.0)
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


def test_a_baselines_elmo_settings_never_make_it_an_extra():
    """SICK's quick profile chose ELMo dropout 0.0: the committed baselines (made when the
    default was 0.5) still fill their cells, the committed ELMo runs at 0.5 do not."""
    from conftest import REPO

    from experiments.record import Record
    from reporting.cell_rules import differences

    runs = [Record.read(p) for p in sorted((REPO / "results" / "small" / "runs" / "nli").glob("*/results.json"))]
    baseline = next(r for r in runs if r.ablation == "baseline" and r.fraction == 1.0)
    elmo = next(r for r in runs if r.ablation == "elmo" and r.fraction == 1.0 and r.config["elmo"]["dropout"] == 0.5)
    assert baseline.config["elmo"]["dropout"] == 0.5 and differences(baseline) == {}
    assert differences(elmo) == {"elmo.dropout": (0.5, 0.0)}


def test_a_run_on_other_data_never_joins_its_cell_whatever_its_directory_says(tmp_path):
    """A SICK baseline trained on another train file (``data.train_path``, which the run
    directory's name leaves out) under the committed configuration's name goes to extras, not into the cell."""
    from conftest import REPO

    committed = REPO / "results" / "small"
    source = next(
        p
        for p in sorted((committed / "runs" / "nli").glob("*/results.json"))
        if json.loads(p.read_text()).get("ablation") == "baseline"
    )
    other = json.loads(source.read_text())
    other["identity"]["data_sha256"]["train"] = "0" * 64  # a 100-pair file
    other["config"]["data"]["train_path"] = str(tmp_path / "sick_100.tsv")
    other.update(config_hash="other-data", seed=3, date="2026-11-24T09:00:00+00:00", dev={"accuracy": 56.7})
    other["config"]["seed"] = 3
    planted = tmp_path / "planted" / "nli" / "+ablation:baseline+profile:quick+seed:3+source:local"
    planted.mkdir(parents=True)
    (planted / "results.json").write_text(json.dumps(other))
    out = tmp_path / "out"
    report.main(["--runs", str(committed / "runs"), str(tmp_path / "planted"), "--out", str(out)])
    assert (out / "table1.csv").read_bytes() == (committed / "table1.csv").read_bytes()
    extras = (out / "extras.md").read_text()
    assert "data.train (file content)='000000000000'" in extras and "56.70" in extras


def test_a_table_directory_keeps_its_options_and_rebuilds_to_the_same_bytes(tmp_path, monkeypatch):
    """The committed tables rebuild byte-identically from their own directory (the options
    they were built with, such as ``--accept elmo.dropout``, are in its report.json); other options are
    refused; the default report reads ``outputs/runs`` into ``outputs/tables`` and never writes ``results/``."""
    import shutil

    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "results", tmp_path / "results", ignore=shutil.ignore_patterns("*.png"))
    shutil.copytree(REPO / "conf", tmp_path / "conf")
    monkeypatch.setattr("reporting.cell_rules.CONF", tmp_path / "conf")
    before = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file()}
    for out in ("results", "results/small"):
        report.main(["--out", out, "--collect"])
    after = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file() and p.suffix != ".png"}
    changed = sorted(str(p.relative_to(tmp_path)) for p in after if before.get(p) != after[p])
    assert not changed
    with pytest.raises(SystemExit, match=r"results was built with --accept \['elmo.dropout'\], not \['task.model'\]"):
        report.main(["--out", "results", "--accept", "task.model"])
    with pytest.raises(SystemExit, match="no results.json under outputs/runs"):
        report.main(["--collect"])
    assert not (tmp_path / "outputs" / "tables").exists() or not any((tmp_path / "outputs" / "tables").iterdir())


def test_a_record_whose_metric_contradicts_its_own_history_never_joins_a_cell(tmp_path):
    """A hand-edited dev metric changed a cell without a word."""
    from conftest import REPO

    committed = REPO / "results" / "small"
    source = next(
        p
        for p in sorted((committed / "runs" / "nli").glob("*/results.json"))
        if json.loads(p.read_text()).get("ablation") == "baseline"
    )
    runs = tmp_path / "runs" / "nli" / source.parent.name
    runs.mkdir(parents=True)
    edited = json.loads(source.read_text())
    edited["dev"]["accuracy"] = 99.0
    (runs / "results.json").write_text(json.dumps(edited))
    with pytest.raises(SystemExit, match="differs from what its profile prescribes"):
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")])
    assert (
        f"dev.accuracy (against epoch {edited['best_epoch']} of its history)=99.0"
        in (tmp_path / "out" / "extras.md").read_text()
    )


def test_a_run_fills_every_cell_its_configuration_is_however_its_command_spelled_it(tmp_path):
    """``make demo`` runs ``elmo.position=both`` without ``+ablation``; the report filed it
    under extras, while its configuration is exactly Table 3's input-and-output cell for NER."""
    from conftest import REPO

    source = (
        REPO / "results/small/runs/ner/+ablation:elmo+elmo.dropout:0.0+profile:quick+seed:0+source:local/results.json"
    )
    demo = json.loads(source.read_text())
    demo["config"]["elmo"]["position"] = "both"
    demo.update(
        ablation=None,
        elmo_position="both",
        config_hash="demo",
        command="python run.py task=ner elmo.position=both profile=quick source=local",
    )
    run = tmp_path / "runs" / "ner" / "elmo.position:both+profile:quick+source:local"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(demo))
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")])
    table3 = (tmp_path / "out" / "table3.csv").read_text()
    assert f"{demo['dev']['f1']:.2f} (n=1)" in table3.splitlines()[1] and not (tmp_path / "out" / "extras.md").exists()


def test_footers_write_the_runs_root_as_RUNS():
    """A record's runs root is where it was made, not what it is: footers name it ``runs_root=RUNS``."""
    assert report.general_runs_root("python run.py task=ner seed=0 runs_root=/work/x/y threads=1") == (
        "python run.py task=ner seed=0 runs_root=RUNS threads=1"
    )
    assert (
        report.general_runs_root("python run.py task=ner my_runs_root=/a") == "python run.py task=ner my_runs_root=/a"
    )


def _with_finetune(r, value: bool):
    """The record with its biLM fine-tuning set, in the layout its configuration is written in."""
    import copy

    from experiments.record import Record

    config = copy.deepcopy(r.config)
    config["elmo" if "finetune" in (config.get("elmo") or {}) else "encoder"]["finetune"] = value
    return Record.from_dict({**r.to_dict(), "config": config})


def test_a_variant_is_named_against_the_biLM_use_its_profile_prescribes(tmp_path):
    """SICK's paper profile fine-tunes the biLM (§3.4, A.1): its committed ELMo runs made on the base biLM are
    a variant there, and the same record with the fine-tuned biLM is the plain cell; in the quick profile,
    which reads the base biLM, fine-tuning is the variant, as before."""
    from conftest import REPO

    from experiments.record import Record
    from reporting.cell_rules import settings, variant

    def elmo_runs(directory):
        return [
            Record.read(p)
            for p in sorted((REPO / "results" / directory / "runs" / "nli").glob("*/results.json"))
            if json.loads(p.read_text()).get("ablation") == "elmo"
        ]

    base = next(r for r in elmo_runs("paper") if not settings(r.config)["encoder.finetune"])
    assert variant(base) == "base biLM (not fine-tuned)"
    assert variant(_with_finetune(base, True)) == ""
    quick = next(r for r in elmo_runs("small") if not settings(r.config)["encoder.finetune"])
    assert variant(quick) == ""
    assert variant(_with_finetune(quick, True)) == "finetuned biLM"
