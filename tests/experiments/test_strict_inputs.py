"""Nothing silently wrong: weights the options do not describe, options without the keys that
decide the architecture, SQuAD answers not at their offset, impossible configuration values —
each fails with one line naming file and key (or, for a documented rule, is counted and warned)."""

import json
import subprocess
import sys

import h5py
import numpy as np
import pytest
from conftest import REPO, SAMPLES, random_bilm
from run_configs import tiny_qa_cfg as _qa_cfg

from elmo_core import load_bilm, save_bilm
from elmo_core.options import BiLMFormatError
from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import DataError
from tasks.qa.reader import read_squad_file


def _saved(tmp_path, **overrides):
    save_bilm(random_bilm(**overrides), tmp_path / "options.json", tmp_path / "weights.hdf5")
    return tmp_path / "options.json", tmp_path / "weights.hdf5"


@pytest.mark.parametrize(
    "block,key",
    [
        ("char_cnn", "n_highway"),
        ("char_cnn", "activation"),
        ("char_cnn", "max_characters_per_token"),
        ("lstm", "use_skip_connections"),
        ("lstm", "cell_clip"),
        ("lstm", "proj_clip"),
    ],
)
def test_options_without_an_architecture_key_are_refused(tmp_path, block, key):
    options, weights = _saved(tmp_path)
    d = json.loads(options.read_text())
    del d[block][key]
    options.write_text(json.dumps(d))
    with pytest.raises(BiLMFormatError, match=rf"{options}: missing key '{block}\.{key}'"):
        load_bilm(options, weights)


@pytest.mark.parametrize(
    "change,unused", [({"lstm": {"n_layers": 1}}, "Cell1"), ({"char_cnn": {"n_highway": 0}}, "CNN_high_0")]
)
def test_weights_the_options_do_not_use_are_refused_unless_allowed(tmp_path, change, unused):
    options, weights = _saved(tmp_path)
    full = load_bilm(options, weights)
    d = json.loads(options.read_text())
    for block, values in change.items():
        d[block].update(values)
    options.write_text(json.dumps(d))
    with pytest.raises(BiLMFormatError, match=rf"{weights}: \d+ dataset\(s\) the options do not use: .*{unused}"):
        load_bilm(options, weights)
    smaller = load_bilm(options, weights, allow_extra=True)  # documented escape hatch: the options' model
    assert smaller.opts.n_layers + smaller.opts.n_highway < full.opts.n_layers + full.opts.n_highway


def test_an_undeclared_dataset_is_refused_and_the_declared_softmax_is_not(tmp_path):
    options, weights = _saved(tmp_path)
    with h5py.File(weights, "a") as f:
        f.create_dataset("softmax/W", data=np.zeros((4, 8), dtype=np.float32))
    with pytest.raises(BiLMFormatError, match="softmax/W"):
        load_bilm(options, weights)
    d = json.loads(options.read_text())
    d["softmax"] = {"type": "full", "vocab_size": 4}  # models exported by elmo_core.pretrain declare theirs
    options.write_text(json.dumps(d))
    load_bilm(options, weights)


def test_the_shipped_biLMs_load_strictly():
    from elmo_core.pretrained import model_dir

    for name in ("small", "small-v3", "small-v2", "small-v1"):
        load_bilm(model_dir(name) / "options.json", model_dir(name) / "weights.hdf5")


def _squad(tmp_path, answer_start, text="Denver Broncos"):
    context = "The American Football Conference champion Denver Broncos defeated the Carolina Panthers."
    data = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {
                                "id": "q1",
                                "question": "Who won?",
                                "answers": [{"text": text, "answer_start": answer_start}],
                            }
                        ],
                    }
                ]
            }
        ]
    }
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data))
    return path, context


def test_squad_answer_off_its_offset_is_realigned_to_its_text_and_counted(tmp_path):
    path, context = _squad(tmp_path, 0)
    good = context.index("Denver Broncos")
    ds, stats = read_squad_file(_squad(tmp_path, good)[0])
    assert stats["answers_realigned"] == 0
    for start in (good + 7, good - 7, 0, len(context)):
        ds, stats = read_squad_file(_squad(tmp_path, start)[0])
        first, last = ds[0]["spans"][0]
        assert ds[0]["context_tokens"][first : last + 1] == ["Denver", "Broncos"] and stats["answers_realigned"] == 1


@pytest.mark.parametrize(
    "start,text,message",
    [
        (41, "Seattle Seahawks", "answer 'Seattle Seahawks' is not in the context"),
        (500, "Denver Broncos", "answer offset 500 outside the context"),
        ("41", "Denver Broncos", "answer_start must be an integer"),
        (41, "", "answer text must be a non-empty string"),
    ],
)
def test_squad_answer_that_cannot_be_found_is_an_error_naming_file_and_question(tmp_path, start, text, message):
    path, _ = _squad(tmp_path, start, text)
    with pytest.raises(DataError, match=rf"{path}: question q1: {message}"):
        read_squad_file(path)


def test_realigned_answers_are_warned_in_the_runs_output(bilm_files, tmp_path, capsys):
    data = json.loads((SAMPLES["qa"] / "squad_tiny.json").read_text())
    qa = data["data"][0]["paragraphs"][0]["qas"][0]
    qa["answers"][0]["answer_start"] += 3
    (tmp_path / "shifted.json").write_text(json.dumps(data))
    cfg = _qa_cfg(
        bilm_files,
        tmp_path,
        "elmo.position=none",
        "trainer.max_epochs=1",
        "trainer.min_updates=0",
        "data.fraction=1.0",
        f"data.dir={tmp_path}",
        "data.train_file=shifted.json",
        f"data.dev_path={SAMPLES['qa'] / 'squad_tiny.json'}",
    )
    record = runner.train(as_run(cfg), tmp_path / "run")
    assert "warning: qa/train: 1 answers realigned" in capsys.readouterr().err
    assert record["data_warnings"] == ["qa/train: 1 answers realigned"]


@pytest.mark.parametrize(
    "override,message",
    [
        ("elmo.l2=-1", "error: elmo.l2=-1: must be greater than or equal to 0"),
        ("trainer.max_epochs=0", "error: trainer.max_epochs=0: must be greater than or equal to 1"),
        ("data.fraction=1.5", "error: data.fraction=1.5: must be less than or equal to 1"),
        ("data.fraction=0", "error: data.fraction=0: must be greater than 0"),
        ("elmo.mix=median", "error: elmo.mix='median': must be 'all', 'last' or 'average'"),
        ("elmo.dropout=1.2", "error: elmo.dropout=1.2: must be less than 1"),
        ("task.model.dropout=-0.1", "error: task.model.dropout=-0.1: must be greater than or equal to 0"),
        ("trainer.lr=0", "error: trainer.lr=0: must be greater than 0"),
        (
            "mode=serve",
            "error: mode='serve': must be 'train', 'evaluate', 'predict', 'finetune', 'embed_sample' or 'dry_run'",
        ),
    ],
)
def test_impossible_values_fail_at_start_up_with_one_line(tmp_path, override, message):
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "task=ner", f"data.dir={SAMPLES['ner']}", override, f"runs_root={runs}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.strip() == message + "; nothing was run", done.stderr
    assert not any(p.is_file() for p in runs.rglob("*")), "a run that never started left files behind"
    assert not (runs / "ner").exists(), "a run that never started left its directory behind"


def test_the_full_traceback_on_request(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "task=ner", "elmo.l2=-1", f"runs_root={tmp_path}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**__import__("os").environ, "HYDRA_FULL_ERROR": "1"},
    )
    assert done.returncode != 0 and "Traceback" in done.stderr and "ConfigError: elmo.l2=-1" in done.stderr


def test_a_byte_order_mark_never_becomes_part_of_a_token(tmp_path):
    """A UTF-8 BOM before the first NER token, and before a ``-DOCSTART-`` line."""
    from tasks.ner.reader import read_conll2003_file

    (tmp_path / "a.conll").write_bytes(b"\xef\xbb\xbfEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n")
    ds, _ = read_conll2003_file(tmp_path / "a.conll")
    assert ds["tokens"] == [["EU", "rejects"]]
    (tmp_path / "b.conll").write_bytes(b"\xef\xbb\xbf-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\n")
    ds, stats = read_conll2003_file(tmp_path / "b.conll")
    assert ds["tokens"] == [["EU"]] and stats["docstart_lines"] == 1


@pytest.mark.parametrize(
    "tree, message",
    [
        ("(3 (2 ) (2 good))", "empty token at column"),
        ("(3 (2 New York) (2 good))", "token with a space 'New York'"),
        ("(４ (2 a) (2 good))", "bad label '４'"),
    ],
)
def test_sst_trees_with_empty_tokens_spaced_tokens_or_non_ascii_labels_are_refused(tmp_path, tree, message):
    from tasks.sst.reader import read_sst_file

    (tmp_path / "t.txt").write_text("(2 (2 fine) (2 .))\n" + tree + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"t.txt:2: .*{message}"):
        read_sst_file(tmp_path / "t.txt")
