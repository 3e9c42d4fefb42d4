"""Prediction files in each official scorer's format; our metrics read back from them agree."""

import json

import pytest
from conftest import SAMPLES
from run_configs import compose_cfg as _cfg

from experiments import runner
from experiments.run_config import as_run
from tasks.ner.metric import span_f1
from tasks.ner.tags import bio_to_iob1, iob1_to_bio
from tasks.srl.metric import bio_to_brackets


def test_conlleval_hand_worked_example(tmp_path):
    # gold chunks: PER(A-B) LOC(D) ORG(F) ORG(G); predicted: PER(A-B) ORG(D) ORG(F-G) MISC(H).
    # conlleval: 1 correct of 4 found and 4 gold -> precision 25.00%, recall 25.00%, FB1 25.00
    (tmp_path / "out.txt").write_text(
        "A I-PER I-PER\nB I-PER I-PER\nC O O\nD I-LOC I-ORG\nE O O\n\nF I-ORG I-ORG\nG B-ORG I-ORG\nH O I-MISC\n"
    )
    s = conlleval_file(tmp_path / "out.txt")
    assert s["precision"] == pytest.approx(25.0) and s["recall"] == pytest.approx(25.0)
    assert round(s["f1"], 2) == 25.00


def test_iob1_round_trip():
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "B-ORG"]
    assert bio_to_iob1(iob1_to_bio(iob1)) == iob1


def test_srl_brackets():
    assert bio_to_brackets(["B-ARG0", "I-ARG0", "B-V", "B-ARG1", "O"]) == ["(ARG0*", "*)", "(V*)", "(ARG1*)", "*"]


def _train(task_overrides, tmp_path, bilm_files, name):
    o, w = bilm_files
    out = tmp_path / name
    out.mkdir()
    task = next(o.split("=", 1)[1] for o in task_overrides if o.startswith("task="))
    cfg = _cfg(
        [
            *task_overrides,
            f"data.dir={SAMPLES[task]}",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "elmo.position=input",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
        ]
    )
    return runner.train(as_run(cfg), out), out


def test_ner_prediction_file_scores_as_results(tmp_path, bilm_files):
    r, out = _train(
        [
            "task=ner",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            "task.model.hidden=[8]",
            "task.model.char_filters=4",
            "task.model.word_dim=8",
            "trainer.max_epochs=4",
            "trainer.min_updates=0",
            "trainer.lr=0.01",
        ],
        tmp_path,
        bilm_files,
        "ner",
    )
    path = out / "dev_predictions.conll"
    assert r["prediction_files"]["dev"] == str(path)
    lines = path.read_text().split("\n")
    assert lines[0].split()[:2] == ["Blue", "I-ORG"]  # gold as in the (IOB1) input file
    assert abs(conlleval_file(path)["f1"] - r["dev"]["f1"]) < 0.01


def test_other_prediction_files(tmp_path, bilm_files):
    small = ["task.model.word_dim=8"]
    r, out = _train(
        [
            "task=sst",
            "data.train_file=sst_tiny.txt",
            "data.dev_file=sst_tiny.txt",
            "task.model.hidden=4",
            "task.model.feedforward=4",
            "task.model.char_filters=4",
            *small,
        ],
        tmp_path,
        bilm_files,
        "sst",
    )
    rows = [line.split("\t") for line in (out / "dev_predictions.tsv").read_text().splitlines()]
    assert len(rows) == 24 and rows[0][0] == "4"
    assert 100 * sum(g == p for g, p in rows) / 24 == pytest.approx(r["dev"]["accuracy"])
    names = ("very negative", "negative", "neutral", "positive", "very positive")
    for k, name in enumerate(names):  # each gold class's accuracy, as the file shows it
        of_class = [p for g, p in rows if g == str(k)]
        right = 100 * sum(p == str(k) for p in of_class) / max(1, len(of_class))
        assert r["dev"]["per_class_accuracy"][name] == pytest.approx(right), name

    r, out = _train(
        [
            "task=nli",
            "data.format=sick",
            "data.train_file=sick_tiny.tsv",
            "data.dev_file=sick_tiny.tsv",
            "task.model.hidden=4",
            *small,
        ],
        tmp_path,
        bilm_files,
        "nli",
    )
    rows = [line.split("\t") for line in (out / "dev_predictions.tsv").read_text().splitlines()]
    assert rows[0][:2] == ["1", "entailment"] and len(rows) == 12

    r, out = _train(
        [
            "task=qa",
            "data.train_file=squad_tiny.json",
            "data.dev_file=squad_tiny.json",
            "task.model.hidden=4",
            "task.model.linear=4",
            "task.model.char_filters=4",
            *small,
        ],
        tmp_path,
        bilm_files,
        "qa",
    )
    answers = json.loads((out / "dev_predictions.json").read_text())
    assert sorted(answers) == ["q1", "q2", "q3", "q4"] and all(isinstance(a, str) for a in answers.values())

    r, out = _train(
        [
            "task=srl",
            "data.train_file=srl_tiny.conllu",
            "data.dev_file=srl_tiny.conllu",
            "task.model.hidden=4",
            "task.model.layers=2",
            "task.model.predicate_dim=4",
            *small,
        ],
        tmp_path,
        bilm_files,
        "srl",
    )
    gold = (out / "dev_predictions.gold.props").read_text().split("\n\n")
    assert gold[0].splitlines()[1] == "sold\t(V*)" and gold[0].splitlines()[0] == "-\t(ARG0*)"
    assert gold[1].splitlines()[0].split("\t") == ["-", "(ARG0*)", "(ARG0*)"]  # two predicates, two columns
    assert (out / "dev_predictions.props").exists()


def conlleval_file(path) -> dict:
    """Score a conlleval input file (``... gold predicted`` per line, blank line between
    sentences; IOB1 or BIO) with ``span_f1``."""
    gold, pred, g, p = [], [], [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            cols = line.split()
            if not cols or cols[0] == "-DOCSTART-":
                if g:
                    gold.append(g)
                    pred.append(p)
                g, p = [], []
                continue
            if len(cols) < 3:
                raise ValueError(f"{path}:{lineno}: expected at least 3 columns (token gold predicted)")
            g.append(cols[-2])
            p.append(cols[-1])
    if g:
        gold.append(g)
        pred.append(p)
    return span_f1(gold, pred)
