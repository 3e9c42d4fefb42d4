"""Which run records join a cell of the report, and which stay out or become variants: profiles, biLMs,
encoders, data, debug runs, accepted keys."""

import json

import pytest
from report_records import (
    BEFORE_VECTORS,
    has_cell,
    with_bilm,
    with_composed_config,
    with_finetune,
    write_bert_record,
    write_record,
)

from experiments.plan import record_digest
from reporting import cell_rules, report

ACCEPT = ["--accept", *BEFORE_VECTORS]  # records made before the static vectors


def test_state_policy_and_finetuned_runs_are_variants_not_averaged_in(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 70.0)
    write_record(runs, "ner", "elmo", 0, 80.0)
    write_record(runs, "ner", "elmo", 1, 82.0)
    write_record(runs, "ner", "elmo", 0, 83.0, state="stateful_warmup")
    write_record(runs, "ner", "elmo", 0, 86.0, finetune=True)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), *ACCEPT])
    assert has_cell((tmp_path / "out" / "table1.md").read_text(), "81.00", 2)  # the variants stay out
    variants = (tmp_path / "out" / "variants.md").read_text()
    state_row = next(line for line in variants.splitlines() if "state=stateful_warmup" in line)
    assert "83.00 (n=1)" in state_row and "80.00 (n=1)" in state_row and "+3.00 points" in state_row
    tuned_row = next(line for line in variants.splitlines() if "finetuned biLM" in line)
    assert "+6.00 points" in tuned_row and "300.0 → 150.0" in tuned_row


def test_runs_of_different_profiles_are_never_averaged_together(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 60.0)
    write_record(runs, "ner", "elmo", 0, 70.0)
    write_record(runs, "ner", "baseline", 0, 90.0, profile="paper")
    write_record(runs, "ner", "elmo", 0, 92.0, profile="paper")
    with pytest.raises(SystemExit, match=r"several profiles: paper \(2 records\), quick \(2 records\)"):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), *ACCEPT])
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--profile", "paper", *ACCEPT])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "— paper profile" in t1 and "90.00 (n=1)" in t1 and "92.00 (n=1)" in t1
    assert "60.00" not in t1 and "70.00" not in t1
    with pytest.raises(SystemExit, match="no runs with profile 'full'"):
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out_full"), "--profile", "full", *ACCEPT])
    with pytest.raises(SystemExit, match=r"out was built with --profile 'paper', not 'full'"):  # its own options only
        report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--profile", "full", *ACCEPT])


def test_runs_of_different_biLMs_are_never_averaged_or_collected_together(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for root, sha, value in ((old, "a" * 64, 70.0), (new, "b" * 64, 75.0)):
        write_record(root, "ner", "baseline", 0, 60.0)
        write_record(root, "ner", "elmo", 0, value)
        for path in root.glob("**/results.json"):
            with_bilm(path, sha)
    both = ["--runs", str(old), str(new), "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit, match=r"several biLMs: aaaaaaaaaaaa \(1 records\), bbbbbbbbbbbb \(1 records\)"):
        report.main([*both, *ACCEPT])
    report.main(both + ["--bilm", "bbbb", "--collect", *ACCEPT])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert "75.00 (n=1)" in t1 and "70.00" not in t1 and "60.00 (n=1)" in t1  # the baseline goes with either
    assert "biLM: bbbbbbbbbbbb" in t1
    # never over the new biLM's tables: the directory keeps --bilm bbbb, so the old runs match nothing there,
    # and asking for the old biLM there is refused
    with pytest.raises(SystemExit, match="matches 0 biLMs"):
        report.main(["--runs", str(old), "--out", str(tmp_path / "out"), "--collect", *ACCEPT])
    with pytest.raises(SystemExit, match=r"out was built with --bilm 'bbbb', not 'aaaa'"):
        report.main(["--runs", str(old), "--out", str(tmp_path / "out"), "--bilm", "aaaa", *ACCEPT])
    from reporting.table_directory import collect  # records of two identities in one place: both kept

    for path in sorted(old.glob("**/results.json")):
        collect(path, old, tmp_path / "out" / "runs")
    collected = sorted(p.parent.name for p in (tmp_path / "out" / "runs" / "ner").glob("*/results.json"))
    assert len(collected) == 3 and sum("@" in name for name in collected) == 1  # both ELMo records kept
    with pytest.raises(SystemExit, match="matches 0 biLMs"):
        report.main(
            [
                "--runs",
                str(old),
                str(new),
                "--out",
                str(tmp_path / "elsewhere"),
                "--bilm",
                "cccc",
                "--accept",
                *BEFORE_VECTORS,
            ]
        )


def test_transformer_runs_go_to_encoders_md_never_into_the_paper_tables(tmp_path):
    runs = tmp_path / "runs"
    for seed, (b, e, t) in enumerate([(80.0, 90.0, 85.0), (82.0, 91.0, 86.0), (84.0, 92.0, 87.0)]):
        write_record(runs, "ner", "baseline", seed, b)
        write_record(runs, "ner", "elmo", seed, e)
        write_bert_record(runs, "ner", seed, t)
    probe = {
        "record_version": 2,
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
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out"), *ACCEPT])
    t1 = (tmp_path / "out" / "table1.md").read_text()
    assert has_cell(t1, "91.00", 3) and "86.00" not in t1  # ELMo cell holds the biLM runs only
    enc = (tmp_path / "out" / "encoders.md").read_text()
    assert has_cell(enc, "82.00", 3) and has_cell(enc, "91.00", 3) and has_cell(enc, "86.00", 3)
    assert "embedded small BERT (bbbbbbbbbbbb, first piece)" in enc
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in enc.splitlines() if line.startswith("| probe_pos")]
    assert ["probe_pos", "4", "—", "88.00"] in rows and ["probe_pos", "1", "94.00", "85.00"] in rows
    probes = (tmp_path / "out" / "probes.md").read_text()
    assert "88.00" not in probes and "94.00" in probes  # probes.md: the biLM's layers only


def test_a_debug_run_beside_committed_records_never_changes_a_cell(tmp_path):
    """A one-epoch run of a committed configuration is listed in extras.md and the
    committed tables (CSV and the Markdown table, footer aside) are unchanged."""
    from conftest import REPO

    committed = REPO / "results" / "history" / "small-v2_quick"
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
    report.main(["--runs", str(committed / "runs"), str(tmp_path / "planted"), "--out", str(out), *ACCEPT])
    for name in ("table1", "table2", "table3"):
        assert (out / f"{name}.csv").read_bytes() == (committed / f"{name}.csv").read_bytes()
        ours, theirs = ((d / f"{name}.md").read_text().split("Rebuilt from")[0] for d in (out, committed))
        assert ours == theirs
    extras = (out / "extras.md").read_text()
    assert "trainer.max_epochs=1 (prescribed 12)" in extras and "29.43" in extras
    assert f"--runs {committed / 'runs'} {tmp_path / 'planted'} --out {out} --accept" in (out / "table1.md").read_text()


def test_tables_of_another_biLM_are_never_rewritten_in_place(tmp_path):
    old, new = tmp_path / "out" / "runs", tmp_path / "new"
    for root, sha in ((old, "a" * 64), (new, "b" * 64)):
        write_record(root, "ner", "elmo", 0, 70.0)
        for path in root.glob("**/results.json"):
            with_bilm(path, sha)
    with pytest.raises(SystemExit, match=r"holds the tables of other runs \(profile quick, biLM aaaaaaaaaaaa"):
        report.main(["--runs", str(new), "--out", str(tmp_path / "out"), "--collect", *ACCEPT])
    assert not (tmp_path / "out" / "table1.md").exists()
    report.main(["--runs", str(new), "--out", str(tmp_path / "elsewhere"), *ACCEPT])
    assert f"--runs {new} --out {tmp_path / 'elsewhere'} --accept" in (tmp_path / "elsewhere" / "table1.md").read_text()


def test_accepted_keys_let_deliberate_variations_into_the_tables(tmp_path):
    from conftest import REPO

    source = next(
        p
        for p in sorted((REPO / "results" / "history" / "small-v2_quick" / "runs" / "ner").glob("*/results.json"))
        if json.loads(p.read_text()).get("ablation") == "elmo" and "transformer" not in p.parent.name
    )
    r = json.loads(source.read_text())
    r["config"]["trainer"]["max_epochs"] = 1
    r["config_hash"] = record_digest(r)  # as the run made with that setting would have it
    (tmp_path / "runs" / "ner" / "x").mkdir(parents=True)
    (tmp_path / "runs" / "ner" / "x" / "results.json").write_text(json.dumps(r))
    for entry in (r.get("predictions") or {}).values():  # the predictions travel with the record
        (tmp_path / "runs" / "ner" / "x" / entry["file"]).write_bytes((source.parent / entry["file"]).read_bytes())
    with pytest.raises(SystemExit, match="every record below .* differs from what its profile prescribes"):
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "a"), *ACCEPT])
    report.main(
        ["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "b"), *ACCEPT, "--accept", "trainer.max_epochs"]
    )
    t1 = (tmp_path / "b" / "table1.md").read_text()
    assert "trainer.min_updates, trainer.max_epochs)" in t1 and "--accept trainer.max_epochs`" in t1


def test_a_baselines_elmo_settings_never_make_it_an_extra():
    """SICK's quick profile chose ELMo dropout 0.0: the committed baselines (made when the
    default was 0.5) still fill their cells, the committed ELMo runs at 0.5 do not."""
    from conftest import REPO

    from experiments.record import Record
    from reporting.cell_rules import differences

    made_then = REPO / "results" / "history" / "small_before_predictions" / "runs" / "nli"  # baselines rerun since
    kept = REPO / "results" / "history" / "small-v2_quick" / "runs" / "nli"
    runs = [Record.read(p) for d in (made_then, kept) for p in sorted(d.glob("*/results.json"))]
    baseline = next(r for r in runs if r.ablation == "baseline" and r.fraction == 1.0)
    elmo = next(r for r in runs if r.ablation == "elmo" and r.fraction == 1.0 and r.config["elmo"]["dropout"] == 0.5)
    assert baseline.config["elmo"]["dropout"] == 0.5 and differences(baseline, tuple(BEFORE_VECTORS)) == {}
    assert differences(elmo, tuple(BEFORE_VECTORS)) == {"elmo.dropout": (0.5, 0.0)}


def test_a_run_on_other_data_never_joins_its_cell_whatever_its_directory_says(tmp_path):
    """A SICK baseline trained on another train file (``data.train_path``, which the run
    directory's name leaves out) under the committed configuration's name goes to extras, not into the cell."""
    from conftest import REPO

    committed = REPO / "results" / "history" / "small-v2_quick"
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
    other["config_hash"] = record_digest(other)
    planted = tmp_path / "planted" / "nli" / "+ablation:baseline+profile:quick+seed:3+source:local"
    planted.mkdir(parents=True)
    (planted / "results.json").write_text(json.dumps(other))
    out = tmp_path / "out"
    report.main(["--runs", str(committed / "runs"), str(tmp_path / "planted"), "--out", str(out), *ACCEPT])
    assert (out / "table1.csv").read_bytes() == (committed / "table1.csv").read_bytes()
    extras = (out / "extras.md").read_text()
    assert "data.train (file content)='000000000000'" in extras and "56.70" in extras


def test_a_record_whose_metric_contradicts_its_own_history_never_joins_a_cell(tmp_path):
    """A hand-edited dev metric changed a cell without a word."""
    from conftest import REPO

    committed = REPO / "results" / "history" / "small-v2_quick"
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
    with pytest.raises(SystemExit, match="differs from what its profile prescribes") as refused:
        report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), *ACCEPT])
    assert f"dev.accuracy (against epoch {edited['best_epoch']} of its history)=99.0" in str(refused.value)
    assert not (tmp_path / "out").exists()  # a refused report writes nothing


def test_a_run_fills_every_cell_its_configuration_is_however_its_command_spelled_it(tmp_path):
    """``make demo`` runs ``elmo.position=both`` without ``+ablation``; the report filed it
    under extras, while its configuration is exactly Table 3's input-and-output cell for NER."""
    from conftest import REPO

    source = (
        REPO
        / "results/history/small_before_predictions/runs/ner"
        / "+ablation:elmo+elmo.dropout:0.0+profile:quick+seed:0+source:local/results.json"
    )
    demo = json.loads(source.read_text())
    demo["config"]["elmo"]["position"] = "both"
    demo.update(
        ablation=None,
        elmo_position="both",
        config_hash="demo",
        command="python run.py task=ner elmo.position=both profile=quick source=local",
    )
    demo["config_hash"] = record_digest(demo)
    run = tmp_path / "runs" / "ner" / "elmo.position:both+profile:quick+source:local"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(demo))
    report.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), *ACCEPT])
    table3 = (tmp_path / "out" / "table3.csv").read_text()
    assert f"{demo['dev']['f1']:.2f} (n=1)" in table3.splitlines()[1] and not (tmp_path / "out" / "extras.md").exists()


def test_a_variant_is_named_against_the_biLM_use_its_profile_prescribes(tmp_path):
    """SICK's paper profile fine-tunes the biLM (§3.4, A.1): its committed ELMo runs made on the base biLM are
    a variant there, and the same record with the fine-tuned biLM is the plain cell; in the quick profile,
    which reads the base biLM, fine-tuning is the variant, as before."""
    from conftest import REPO

    from experiments.record import Record
    from reporting.cell_rules import record_settings, variant

    def elmo_runs(directory):
        return [
            Record.read(p)
            for p in sorted((REPO / "results" / directory / "runs" / "nli").glob("*/results.json"))
            if json.loads(p.read_text()).get("ablation") == "elmo"
        ]

    base = next(r for r in elmo_runs("history/paper_small-v2") if not record_settings(r)["encoder.finetune"])
    assert variant(base) == "base biLM (not fine-tuned)"
    assert variant(with_finetune(base, True)) == ""
    quick = next(r for r in elmo_runs("history/small-v2_quick") if not record_settings(r)["encoder.finetune"])
    assert variant(quick) == ""
    assert variant(with_finetune(quick, True)) == "finetuned biLM"
    assert variant(base, ("encoder.finetune",)) == "" and variant(base, ("encoder",)) == ""  # accepted: no variant


def test_a_record_whose_state_policy_is_not_its_profiles_is_a_variant_unless_the_report_accepts_it():
    """The paper profile's NER reads a stateful biLM (allennlp's; results/conformance.md): its committed runs
    made with the stateless one are a variant, unless the report was told the runs may differ in it."""
    from conftest import REPO

    from experiments.record import Record
    from reporting.cell_rules import variant

    runs = sorted((REPO / "results" / "history" / "paper_small-v2" / "runs" / "ner").glob("*elmo*/results.json"))
    stateless = [r for r in map(Record.read, runs) if r.run.encoder.state == "stateless"]
    assert stateless and all(variant(r) == "state=stateless" for r in stateless)
    assert all(variant(r, ("encoder.state",)) == "" for r in stateless)


def test_the_data_a_choice_prescribes_is_read_from_the_working_directory_of_the_moment(tmp_path, monkeypatch):
    """The default data paths are relative (``../shared``): a report run from another directory must not be
    answered from what an earlier one found (a memo keyed on the choices alone did, and let a run on other
    data into a cell)."""
    from conftest import shared_path

    from reporting.cell_rules import prescribed_data

    monkeypatch.delenv("ELMO_SHARED", raising=False)
    choices = ("task=nli", "source=local", "+ablation=baseline", "profile=quick")
    (tmp_path / "elsewhere" / "deeper").mkdir(parents=True)
    (tmp_path / "checkout").mkdir()
    (tmp_path / "shared").symlink_to(
        shared_path("data").parent
    )  # ../shared beside a checkout, wherever this one's lies
    monkeypatch.chdir(tmp_path / "elsewhere" / "deeper")
    assert set(prescribed_data(choices).values()) == {"missing"}
    monkeypatch.chdir(tmp_path / "checkout")
    found = prescribed_data(choices)
    assert found and "missing" not in found.values()


def test_a_rerun_on_the_seeded_finetuning_replaces_one_on_an_unseeded_draw(tmp_path):
    """Before 2026-11-25 biLM fine-tuning was not seeded: such a record keeps its cell until a rerun of its
    configuration on the seeded fine-tuning exists, which then counts (whatever the dates), the old one an extra."""
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 70.0)
    write_record(runs / "unseeded", "ner", "elmo", 0, 80.0, finetune=True, date="2026-11-24T10:00:00+00:00")
    report.main(["--runs", str(runs), "--out", str(tmp_path / "before"), *ACCEPT])
    assert "80.00 (n=1)" in (tmp_path / "before" / "variants.md").read_text()
    assert not (tmp_path / "before" / "extras.md").exists()

    write_record(runs / "seeded", "ner", "elmo", 0, 84.0, finetune=True, date="2026-11-23T10:00:00+00:00")
    for path, seeded in (
        (next((runs / where).glob("**/results.json")), where == "seeded") for where in ("unseeded", "seeded")
    ):
        r = json.loads(path.read_text())  # the identities run.py gives them: the seed in the seeded one's
        r["identity"] = {
            "bilm_sha256": None,
            "data_sha256": {},
            "task_version": 1,
            **({"finetune_seed": 0} if seeded else {}),
        }
        if seeded:
            r["bilm_finetune"]["seed"] = 0
        path.write_text(json.dumps(r))
        with_composed_config(path, "encoder.finetune=true")
    report.main(["--runs", str(runs), "--out", str(tmp_path / "after"), *ACCEPT])
    variants = (tmp_path / "after" / "variants.md").read_text()
    assert "84.00 (n=1)" in variants and "80.00" not in variants
    extras = (tmp_path / "after" / "extras.md").read_text()
    assert "80.00" in extras and "'unseeded' (prescribed 'seed 0')" in extras and "unseeded/ner" in extras


def test_table1_rows_say_why_they_differ_from_the_paper(tmp_path):
    """A row's caveats come from its own runs: a cell of one seed, a class a run never predicts right
    (a stalled run), and the task's data where they are not the paper's."""
    import json

    import pandas as pd

    from experiments.record import RECORD_VERSION
    from reporting.tables import comparability_notes

    paths = []
    for i, per_class in enumerate([{"entailment": 0.0, "neutral": 91.5}, {"entailment": 75.5, "neutral": 78.3}]):
        path = tmp_path / f"r{i}.json"
        record = {"record_version": RECORD_VERSION, "task": "nli", "metric": "accuracy", "config": {}}
        path.write_text(json.dumps({**record, "dev": {"per_class_accuracy": per_class}}))
        paths.append(str(path))
    df = pd.DataFrame(
        {
            "task": ["nli", "nli", "nli", "ner"],
            "setting": ["baseline", "baseline", "elmo", "baseline"],
            "full": [True] * 4,
            "value": [61.6, 77.6, 80.0, 88.0],
            "path": [*paths, paths[1], paths[1]],
        }
    )
    notes = comparability_notes(df, "nli").split("; ")
    assert notes == [
        "SICK (4,439 training pairs) stands in for SNLI (550,152)",
        "baseline: 'entailment' never predicted right in 1 of 2 runs (stalled)",
        "ELMo: one seed, no interval",
    ]
    two_seeds = pd.concat([df[df.task == "nli"].assign(task="ner", path=paths[1])] * 2)  # NER: the paper's data
    assert comparability_notes(two_seeds, "ner") == "—"


def test_a_stalled_class_is_found_from_kept_predictions_where_the_record_has_no_classes(tmp_path, monkeypatch):
    """A run recorded before its task scored classes (SST-5's did not) is checked from its re-scored
    predictions."""
    import json

    import numpy as np
    import pandas as pd

    from experiments.record import RECORD_VERSION
    from experiments.rescoring import Rescored
    from reporting import tables

    path = tmp_path / "r.json"
    path.write_text(json.dumps({"record_version": RECORD_VERSION, "task": "sst", "metric": "accuracy", "config": {}}))
    per_class = {"very negative": 0.0, "negative": 61.0, "neutral": 12.0, "positive": 70.0, "very positive": 40.0}
    rescored = Rescored(value=47.0, units=(0,), counts=np.zeros((1, 2)), task="sst", per_class=per_class)
    monkeypatch.setattr(tables, "_unit_counts", lambda p: rescored if p == str(path) else None)
    df = pd.DataFrame(
        {"task": ["sst"] * 4, "setting": ["baseline"] * 2 + ["elmo"] * 2, "full": [True] * 4, "value": [47.0] * 4}
    ).assign(path=[str(path), str(tmp_path / "other.json"), str(tmp_path / "other.json"), str(path)])
    (tmp_path / "other.json").write_text(path.read_text())
    notes = tables.comparability_notes(df, "sst").split("; ")
    assert "baseline: 'very negative' never predicted right in 1 of 2 runs (stalled)" in notes
    assert "ELMo: 'very negative' never predicted right in 1 of 2 runs (stalled)" in notes


@pytest.mark.parametrize(
    "choices",
    [
        ("task=ner", "source=local", "+ablation=elmo", "seed=2"),
        ("task=sst", "profile=paper", "source=local", "+ablation=baseline", "seed=1"),
    ],
)
def test_the_seeds_of_one_configuration_share_its_composition_and_keep_their_own_seed(choices):
    """The report composes a configuration once for all its seeds; each seed's copy is what Hydra composes."""
    import re

    from omegaconf import OmegaConf

    from experiments.config_store import compose

    reads_seed = [p for p in cell_rules.CONF.rglob("*.yaml") if re.search(r"\$\{[^}]*\bseed\b", p.read_text())]
    assert not reads_seed, f"{reads_seed}: a setting that reads the seed makes each seed its own composition"
    shared = cell_rules._composed(cell_rules.CONF, None, choices)
    assert shared == OmegaConf.to_container(compose(choices, cell_rules.CONF), resolve=True)
    unseeded = tuple(c for c in choices if not c.startswith("seed="))
    assert cell_rules._composed(cell_rules.CONF, None, unseeded)["seed"] == 0  # the copy took the seed, not the memo
    odd = (*unseeded, "seed=007")  # a spelling other than a plain integer is Hydra's to read, as run.py reads it
    assert cell_rules._composed(cell_rules.CONF, None, odd) == OmegaConf.to_container(compose(odd), resolve=True)
