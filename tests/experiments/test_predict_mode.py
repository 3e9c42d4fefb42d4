"""``mode=predict`` on raw text: NER tags and entities, SST-5 labels, entailment of TSV pairs,
from the command line and from Python; blank lines skipped with line numbers kept; tasks without raw
input say so in one line."""

import json
import subprocess
import sys

import pytest
from conftest import REPO
from run_configs import compose_cfg
from task_setups import tiny_data

from experiments import runner
from experiments.predictor import Predictor
from experiments.run_config import as_run
from suite_common.errors import ConfigError, DataError


def trained(task, bilm_files, tmp_path):
    o, w = bilm_files
    out = tmp_path / f"run_{task}"
    out.mkdir()
    cfg = compose_cfg(
        [
            f"task={task}",
            *tiny_data(task),
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "elmo.position=input",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
            "task.model.word_dim=8",
            "task.model.char_filters=4",
        ]
    )
    runner.train(as_run(cfg), out)
    return out


def test_ner_tags_raw_text_from_the_command_line_and_from_python(bilm_files, tmp_path):
    run = trained("ner", bilm_files, tmp_path)
    raw = tmp_path / "raw.txt"
    raw.write_text("EU rejects German call to boycott British lamb.\n\nPeter Blackburn spoke in Brussels.\n")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "mode=predict",
            f"checkpoint={run}",
            f"data.test_path={raw}",
            f"cache.dir={tmp_path / 'cache'}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout.strip().splitlines()[-1]
    assert (done.stdout + done.stderr).count(out) == 1  # the path is printed once
    rows = [json.loads(line) for line in open(out)]
    assert [r["line"] for r in rows] == [1, 3]  # the blank line is skipped, numbers kept
    assert rows[0]["tokens"] == ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    assert len(rows[0]["tags"]) == 9 and all(t == "O" or t[:2] in ("B-", "I-") for t in rows[0]["tags"])
    for e in rows[1]["entities"]:
        assert e["text"] == " ".join(rows[1]["tokens"][e["start"] : e["end"]])
    again = Predictor.from_run(run, overrides={"cache.dir": str(tmp_path / "cache")}).predict_lines(
        ["EU rejects German call to boycott British lamb."]
    )
    assert again[0]["tags"] == rows[0]["tags"]


@pytest.mark.parametrize(
    "task, lines, key",
    [
        ("sst", ["a fine , moving film .", "dull"], "label_name"),
        ("nli", ["A man is playing .\tA person plays .", "x\ty"], "label"),
    ],
)
def test_sentences_and_pairs_get_labels(task, lines, key, bilm_files, tmp_path):
    rows = Predictor.from_run(trained(task, bilm_files, tmp_path)).predict_lines(lines)
    assert [r["line"] for r in rows] == [1, 2] and all(isinstance(r[key], str) for r in rows)
    if task == "nli":
        assert {r["label"] for r in rows} <= {"entailment", "neutral", "contradiction"}
        with pytest.raises(DataError, match=r"<lines>:1: expected premise<TAB>hypothesis"):
            Predictor.from_run(tmp_path / "run_nli").predict_lines(["no tab here"])
        with pytest.raises(DataError, match=r"<lines>:2: empty premise"):
            Predictor.from_run(tmp_path / "run_nli").predict_lines(["a b\tc d", " \tA person plays ."])


def test_srl_labels_the_arguments_of_each_bracketed_predicate(bilm_files, tmp_path):
    predictor = Predictor.from_run(trained("srl", bilm_files, tmp_path))
    rows = predictor.predict_lines(["The cat [sat] on the mat .", "He [said] she [left] ."])
    assert [(r["line"], r["predicate"]["text"]) for r in rows] == [(1, "sat"), (2, "said"), (2, "left")]
    assert rows[0]["tokens"] == ["The", "cat", "sat", "on", "the", "mat", "."] and len(rows[0]["tags"]) == 7
    for r in rows:
        for a in r["arguments"]:
            assert a["text"] == " ".join(r["tokens"][a["start"] : a["end"]])
    with pytest.raises(DataError, match=r"<lines>:1: no predicate marked"):
        predictor.predict_lines(["nothing marked here"])


def test_squad_answers_questions_on_their_contexts(bilm_files, tmp_path):
    predictor = Predictor.from_run(trained("qa", bilm_files, tmp_path))
    context = "The Amazon rainforest covers much of the Amazon basin of South America."
    lines = [json.dumps({"context": context, "question": q}) for q in ("What covers the basin?", "Where is it?")]
    rows = predictor.predict_lines(lines)
    assert [r["line"] for r in rows] == [1, 2]
    for r in rows:
        assert r["answer"] == context[r["start_char"] : r["end_char"]] and r["answer"]
    with pytest.raises(DataError, match=r"<lines>:1: expected a JSON object"):
        predictor.predict_lines(['{"question": "no context"}'])


def test_a_task_without_raw_input_says_so(bilm_files, tmp_path):
    from tasks.registry import task_class

    task = task_class("coref")(compose_cfg(["task=coref"]).task)
    with pytest.raises(ConfigError, match="task coref has no mode=predict on raw text"):
        task.read_raw({"line": [1], "text": ["x"]}, "f")
