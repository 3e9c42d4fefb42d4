"""One process per run directory, and one configuration per directory: two launches that differ only in
a data file's content, started together, both keep their records (the second goes to ``<dir>@<digest>``);
two launches of the same configuration train once; a biLM's options.json is part of a run's identity."""

import json
import shutil
import subprocess
import sys

from conftest import REPO, SAMPLES

TINY = [
    "task=ner",
    "trainer.max_epochs=1",
    "trainer.min_updates=0",
    "task.model.hidden=[8]",
    "task.model.char_filters=4",
    "task.model.word_dim=8",
    "trainer.batch_size=8",
    "threads=1",
]


def launch(tmp_path, *overrides):
    return subprocess.Popen(
        [
            sys.executable,
            str(REPO / "run.py"),
            *TINY,
            f"runs_root={tmp_path / 'runs'}",
            f"cache.dir={tmp_path / 'cache'}",
            *overrides,
        ],  # fmt: skip
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def records(tmp_path):
    return sorted((tmp_path / "runs").glob("ner/*/results.json"))


def test_two_launches_on_different_data_started_together_both_keep_their_records(tmp_path):
    a, b = tmp_path / "a.conll", tmp_path / "b.conll"
    shutil.copyfile(SAMPLES["ner"] / "ner_tiny.conll", a)
    text = (SAMPLES["ner"] / "ner_tiny.conll").read_text()
    b.write_text(text.replace(" I-PER", " O", 2))  # other content, same name below its own directory
    common = [f"data.dev_path={SAMPLES['ner'] / 'ner_tiny.conll'}", "+ablation=baseline", "hydra.job.chdir=false"]
    first = launch(tmp_path, f"data.train_path={a}", *common)
    second = launch(tmp_path, f"data.train_path={b}", *common)
    outputs = [p.communicate(timeout=300)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    found = records(tmp_path)
    assert len(found) == 2, (found, outputs)
    assert found[0].parent.name + "@" in found[1].parent.name or found[1].parent.name + "@" in found[0].parent.name
    digests = {json.loads(p.read_text())["config_hash"] for p in found}
    assert len(digests) == 2


def test_two_launches_of_one_configuration_train_once(tmp_path):
    common = [f"data.dir={SAMPLES['ner']}", "data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll",
              "+ablation=baseline"]  # fmt: skip
    first, second = launch(tmp_path, *common), launch(tmp_path, *common)
    outputs = [p.communicate(timeout=300)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    assert len(records(tmp_path)) == 1
    assert sum("skipping: this configuration already has its result" in out for out in outputs) == 1, outputs
    assert sum("epoch 1:" in out for out in outputs) == 1  # one of them trained


def test_another_options_json_is_another_run(tmp_path, bilm_files):
    options, weights = bilm_files
    other = tmp_path / "other_options.json"
    d = json.loads(options.read_text())
    d["lstm"]["cell_clip"] = 1  # another network for the same weights
    other.write_text(json.dumps(d))
    common = [f"data.dir={SAMPLES['ner']}", "data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll",
              f"encoder.weights={weights}", "+ablation=elmo", "elmo.dropout=0.0"]  # fmt: skip
    for opts in (options, other):
        p = launch(tmp_path, f"encoder.options={opts}", *common)
        out = p.communicate(timeout=300)[0]
        assert p.returncode == 0, out
        assert "skipping" not in out
    found = records(tmp_path)
    assert len(found) == 2
    identities = [json.loads(p.read_text())["identity"] for p in found]
    assert identities[0]["bilm_options_sha256"] != identities[1]["bilm_options_sha256"]
    assert identities[0]["bilm_sha256"] == identities[1]["bilm_sha256"]


def test_a_run_routed_to_another_directory_that_fails_leaves_nothing_there(tmp_path):
    good, bad = tmp_path / "good.conll", tmp_path / "bad.conll"
    shutil.copyfile(SAMPLES["ner"] / "ner_tiny.conll", good)
    lines = (SAMPLES["ner"] / "ner_tiny.conll").read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:5]) + "a line with no tag columns\n" + "".join(lines[5:]))
    common = [f"data.dev_path={SAMPLES['ner'] / 'ner_tiny.conll'}", "+ablation=baseline"]
    first = launch(tmp_path, f"data.train_path={good}", *common)
    assert first.wait(timeout=300) == 0
    failed = launch(tmp_path, f"data.train_path={bad}", *common)
    out = failed.communicate(timeout=300)[0]
    assert failed.returncode == 2 and "bad.conll:6" in out, out
    dirs = sorted(p.name for p in (tmp_path / "runs" / "ner").iterdir())
    assert len(dirs) == 1 and "@" not in dirs[0], dirs  # the @<digest> directory it was routed to is gone
