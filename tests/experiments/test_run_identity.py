"""Run identity (Peters et al. 2018 Tables 1-3 are rebuilt from run records): two configurations that
can give different results never share a directory or a record; the same configuration is skipped
wherever its files lie."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES, random_bilm
from run_configs import tiny_ner_run_cfg as _ner

from elmo_core import save_bilm
from experiments import hydra_dirs, runner
from experiments import plan as run_identity
from experiments.record import RECORD_NAMES
from experiments.run_config import as_run
from suite_common import hashing
from suite_common.atomic_files import remove_dead_leftovers, temporary_path

NER_SAMPLE = SAMPLES["ner"]


def _second_bilm(tmp_path):
    save_bilm(random_bilm(seed=1), tmp_path / "o2.json", tmp_path / "w2.hdf5")
    return tmp_path / "o2.json", tmp_path / "w2.hdf5"


def _no_training(monkeypatch):
    monkeypatch.setattr(runner, "fit", lambda *a, **k: pytest.fail("a finished configuration was trained again"))


def test_another_bilm_keeps_both_records_and_each_is_skipped_after(bilm_files, tmp_path, monkeypatch):
    launch = tmp_path / "runs" / "ner" / "elmo.position=input"
    first = runner.train(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=input")), launch)
    first_record = (launch / "results.json").read_text()
    second = runner.train(as_run(_ner(_second_bilm(tmp_path), tmp_path, NER_SAMPLE, "elmo.position=input")), launch)
    assert (launch / "results.json").read_text() == first_record  # the first biLM's record is untouched
    assert second["run_dir"] != first["run_dir"] and Path(second["run_dir"]).name.startswith("elmo.position=input@")
    assert (Path(second["run_dir"]) / "best.pt").exists() and (launch / "best.pt").exists()
    assert second["identity"]["bilm_sha256"] != first["identity"]["bilm_sha256"]
    _no_training(monkeypatch)
    assert (
        runner.train(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=input")), launch)["dev"]
        == first["dev"]
    )
    again = runner.train(as_run(_ner(_second_bilm(tmp_path), tmp_path, NER_SAMPLE, "elmo.position=input")), launch)
    assert again["dev"] == second["dev"] and again["run_dir"] == second["run_dir"]


def test_data_content_decides_not_its_path(bilm_files, tmp_path, monkeypatch):
    launch = tmp_path / "runs" / "ner" / "run"
    done = runner.train(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=input")), launch)
    moved = tmp_path / "moved_checkout"
    moved.mkdir()
    shutil.copy(NER_SAMPLE / "ner_tiny.conll", moved / "ner_tiny.conll")
    with monkeypatch.context() as m:  # same bytes elsewhere (a moved checkout, ELMO_SHARED): the same run
        _no_training(m)
        assert (
            runner.train(as_run(_ner(bilm_files, tmp_path, moved, "elmo.position=input")), launch)["dev"] == done["dev"]
        )
    lines = (moved / "ner_tiny.conll").read_text().splitlines(keepends=True)
    (moved / "ner_tiny.conll").write_text("".join(lines[:-8]) + "\n")  # other content: another run
    other = runner.train(as_run(_ner(bilm_files, tmp_path, moved, "elmo.position=input")), launch)
    assert other["identity"]["data_sha256"] != done["identity"]["data_sha256"] and other["run_dir"] != done["run_dir"]
    assert json.loads((launch / "results.json").read_text())["identity"] == done["identity"]


def test_runs_without_elmo_do_not_depend_on_the_biLM(bilm_files, tmp_path, monkeypatch):
    launch = tmp_path / "runs" / "ner" / "baseline"
    done = runner.train(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=none")), launch)
    assert done["identity"]["bilm_sha256"] is None
    _no_training(monkeypatch)
    assert (
        runner.train(as_run(_ner(_second_bilm(tmp_path), tmp_path, NER_SAMPLE, "elmo.position=none")), launch)["dev"]
        == done["dev"]
    )


def test_task_version_is_part_of_the_identity(bilm_files, tmp_path, monkeypatch):
    cfg = _ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=input")
    from experiments.plan import RunPlan

    before = RunPlan.resolve(as_run(cfg))
    from tasks.registry import task_class

    monkeypatch.setattr(task_class("ner"), "VERSION", 2)
    after = RunPlan.resolve(as_run(cfg))
    assert before.identity["task_version"] == 1 and after.identity["task_version"] == 2
    assert before.digest != after.digest


def test_committed_records_carry_their_identity():
    roots = [
        REPO / "results" / "history" / name / "runs" for name in ("small-v1_quick", "small-v2_quick", "small-v3_quick")
    ]
    roots.append(REPO / "results" / "small" / "runs")
    records = sorted(p for root in roots for name in RECORD_NAMES for p in root.glob(f"**/{name}"))
    assert records
    for path in records:
        r = json.loads(path.read_text())
        assert "identity" in r, f"{path}: a record without its identity"
        assert run_identity.record_digest(r) in (r["config_hash"], None), path  # None: a key since removed
        if r.get("elmo_position", "input") == "none":
            assert r["identity"]["bilm_sha256"] is None and "encoder_sha256" not in r["identity"], path
        elif r["identity"].get("encoder_sha256"):  # a Transformer's layers: its files, no biLM
            encoder = r.get("transformer") or r["bilm"]  # the earlier layout named it under bilm
            assert r["identity"].get("bilm_sha256") is None and r["identity"]["encoder_sha256"] == encoder["sha256"], (
                path
            )
        elif not r["config"]["encoder"].get("finetune"):  # a fine-tuned run's identity names its base biLM
            assert r["identity"]["bilm_sha256"] == r["bilm"]["sha256"], path


def test_dead_processes_leftovers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    final = tmp_path / "out.hdf5"
    mine = temporary_path(final)
    assert mine.name.startswith(".out.hdf5.tmp-") and mine.name.endswith(f"-{os.getpid()}")
    orphan_file = mine.with_name(mine.name.rsplit("-", 1)[0] + f"-{dead_pid}")
    orphan_dir = tmp_path / f".layers.tmp-{dead_pid}"  # the older name, without the host
    other_host = tmp_path / f".out.hdf5.tmp-elsewhere-{dead_pid}"
    alive = tmp_path / f".x.tmp-{os.getppid()}"
    for f in (mine, orphan_file, other_host, alive):
        f.write_text("partial")
    orphan_dir.mkdir()
    (orphan_dir / "layers.npy").write_text("partial")
    removed = remove_dead_leftovers(tmp_path)
    assert sorted(removed) == sorted([orphan_file, orphan_dir])
    assert mine.exists() and other_host.exists() and alive.exists()


@pytest.mark.parametrize(
    "key, earlier, other",
    [
        ("embedding_init", "normal", "xavier_uniform"),
        ("dropout_style", "variational", "standard"),
        ("lowercase_words", False, True),
    ],
)
def test_a_key_added_later_counts_only_away_from_the_value_earlier_runs_had(key, earlier, other):
    """A ``task.model`` key added after runs were recorded (``embedding_init`` at ``normal``, what every earlier
    run did) leaves the digest as it was before the key existed; any other value is another run."""
    identity = {"bilm_sha256": None, "data_sha256": {}, "task_version": 1}
    config = {"task": {"name": "ner", "model": {"word_dim": 50}}, "elmo": {"position": "none"}}
    before = run_identity.run_digest(config, identity)
    at_default = {**config, "task": {"name": "ner", "model": {"word_dim": 50, key: earlier}}}
    assert run_identity.run_digest(at_default, identity) == before
    assert at_default["task"]["model"][key] == earlier  # the caller's configuration is untouched
    changed = {**config, "task": {"name": "ner", "model": {"word_dim": 50, key: other}}}
    assert run_identity.run_digest(changed, identity) != before


def test_word_vectors_count_by_content_and_never_name_the_run_directory(tmp_path):
    """``task.model.vectors`` is a path: its file's content is in the identity (an edited
    file is another run), its value is not in the directory name, and no name leaves the runs root."""
    vectors = tmp_path / "vec.txt"
    vectors.write_text("the 0.1 0.2\n")
    config = {"task": {"name": "ner", "model": {"word_dim": 2, "vectors": str(vectors)}}, "elmo": {"position": "none"}}

    def digest():
        return run_identity.run_digest(config, run_identity.make_identity(as_run(config), None))

    first = digest()
    moved = tmp_path / "elsewhere.txt"
    moved.write_text(vectors.read_text())
    config["task"]["model"]["vectors"] = str(moved)
    assert digest() == first  # the same content under another path: the same run
    moved.write_text("the 0.3 0.2\n")
    hashing._file_sha256.cache_clear()
    assert digest() != first  # edited: another run
    plain = {"task": {"name": "ner", "model": {"word_dim": 2, "vectors": None}}, "elmo": {"position": "none"}}
    assert "files_sha256" not in run_identity.make_identity(as_run(plain), None)  # unset: identities as before
    assert "task.model.vectors" in runner_excludes()
    name = hydra_dirs.run_dir_name("task.model.vectors:../../../../x/vec.txt+seed:0")
    assert "/" not in name and (tmp_path / name).resolve().parent == tmp_path.resolve()
    assert hydra_dirs.run_dir_name("..") != ".."


def runner_excludes():
    from experiments.run_config import run_dir_excludes

    return run_dir_excludes()


def test_a_run_on_the_seeded_finetuning_is_another_run_than_one_on_an_unseeded_draw(bilm_files, tmp_path):
    """Since 2026-11-25 a run that fine-tunes the biLM names the fine-tuning's seed in its identity, so a
    record made on an unseeded fine-tuning (no seed in its identity) is never taken for its result; runs
    that do not fine-tune keep the identity they had."""
    from encoders.bilm import FINETUNE_SEED
    from experiments.plan import RunPlan

    tuned = RunPlan.resolve(
        as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, "elmo.position=input", "encoder.finetune=true"))
    )
    assert tuned.identity["finetune_seed"] == FINETUNE_SEED
    before = {k: v for k, v in tuned.identity.items() if k != "finetune_seed"}
    assert run_identity.run_digest(tuned.resolved, before) != tuned.digest
    for plain in ("elmo.position=input", "elmo.position=none encoder.finetune=true"):
        plan = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, *plain.split())))
        assert "finetune_seed" not in plan.identity


def test_another_finetuning_seed_is_another_run_and_the_default_keeps_earlier_identities(bilm_files, tmp_path):
    """``encoder.finetune_seed`` (its default is the seed every earlier fine-tuning used): another value
    reaches the encoder and the identity, so it is another run; the default leaves the run as it was."""
    from experiments.plan import RunPlan

    overrides = ("elmo.position=input", "encoder.finetune=true")
    tuned = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, *overrides)))
    default = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, *overrides, "encoder.finetune_seed=0")))
    other = RunPlan.resolve(as_run(_ner(bilm_files, tmp_path, NER_SAMPLE, *overrides, "encoder.finetune_seed=2")))
    assert default.digest == tuned.digest and other.digest != tuned.digest
    assert other.identity["finetune_seed"] == 2 and other.encoder.finetune_seed == 2
    assert tuned.encoder.finetune_seed == 0
