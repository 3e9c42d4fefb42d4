"""SRL: readers, BIO-constrained Viterbi, the span metric, and an end-to-end run."""

import random

import pytest
import torch
from conftest import SAMPLES, shared_path

from tasks.srl.decode import bio_constraints, viterbi
from tasks.srl.metric import bio_spans, srl_scores
from tasks.srl.reader import DataFormatError, read_conll2012_file, read_conllu_propbank_file

LABELS = ["O", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-V", "I-V"]


def test_constrained_viterbi_never_emits_invalid_bio():
    trans, start = bio_constraints(LABELS)
    rng = random.Random(0)
    for _ in range(300):
        scores = torch.tensor([[rng.gauss(0, 3) for _ in LABELS] for _ in range(rng.randint(1, 12))])
        tags = [LABELS[k] for k in viterbi(torch.log_softmax(scores, -1), trans, start)]
        assert not tags[0].startswith("I-")
        for prev, cur in zip(tags, tags[1:]):
            if cur.startswith("I-"):
                assert prev != "O" and prev[2:] == cur[2:], tags


def test_viterbi_is_the_unconstrained_argmax_when_that_is_valid():
    trans, start = bio_constraints(LABELS)
    scores = torch.full((4, len(LABELS)), -5.0)
    for t, k in enumerate([1, 2, 0, 5]):
        scores[t, k] = 0.0
    assert viterbi(scores, trans, start) == [1, 2, 0, 5]


def test_span_metric_hand_worked():
    gold = [["B-ARG0", "I-ARG0", "B-V", "B-ARG1", "I-ARG1"], ["B-V", "B-ARG1", "O", "B-ARGM-TMP"]]
    pred = [["B-ARG0", "I-ARG0", "B-V", "B-ARG1", "O"], ["B-V", "B-ARG1", "O", "B-ARGM-LOC"]]
    # gold args: ARG0(0-1) ARG1(3-4) | ARG1(1) TMP(3) = 4; predicted: ARG0 ARG1(3-3) | ARG1 LOC = 4;
    # correct: ARG0, ARG1(1) = 2
    s = srl_scores(gold, pred)
    assert (
        s["precision"] == pytest.approx(50.0) and s["recall"] == pytest.approx(50.0) and s["f1"] == pytest.approx(50.0)
    )
    assert s["per_role"]["ARG0"]["f1"] == 100.0 and s["per_role"]["ARGM-TMP"]["recall"] == 0.0
    assert "V" not in s["per_role"]
    assert bio_spans(["I-ARG0", "I-ARG0", "O", "B-V"]) == {(0, 1, "ARG0"), (3, 3, "V")}


def test_conllu_reader_on_fixture():
    ds, stats = read_conllu_propbank_file(SAMPLES["srl"] / "srl_tiny.conllu")
    assert stats["predicates"] == 3 and stats["unannotated_sentences_skipped"] == 1
    assert stats["sentences_without_predicate"] == 1
    assert ds[0]["tags"] == ["B-ARG0", "B-V", "O", "O", "B-ARG1", "O"] and ds[0]["predicate"] == 1
    # a split predicate: the sense is on "time" but V is on "two"
    assert ds[2]["predicate"] == 3 and ds[2]["tags"][5] == "B-C-V"
    assert ds[1]["sentence"] == ds[2]["sentence"]


def test_conll2012_reader_on_fixture():
    ds, stats = read_conll2012_file(shared_path("data/fixtures/conll2012/example.gold_conll"))
    assert stats["predicates"] == 6 and stats["sentences_without_predicate"] == 1
    assert ds[0]["tokens"][:4] == ["Mali", "government", "officials", "say"]
    assert ds[0]["tags"] == ["B-ARG0", "I-ARG0", "I-ARG0", "B-V"] + ["B-ARG1"] + ["I-ARG1"] * 5 + ["O"]
    assert ds[2]["tags"][5:12] == ["B-ARGM-TMP", "I-ARGM-TMP", "B-ARGM-TMP"] + ["I-ARGM-TMP"] * 4
    coref, stats = read_conll2012_file(shared_path("data/fixtures/conll2012/coref.gold_conll"))
    assert stats["predicates"] == len(coref) > 0


@pytest.mark.parametrize(
    "content,message",
    [
        ("d 0 0 The DT * - - - - * (ARG0* -\nd 0 1 dog NN * - - - - * * -\n\n", r"x:1.*never closed"),
        ("d 0 0 The DT * - - - - * (ARG0* -\nd 0 1 dog NN * - - - - * (V*) -\n\n", r"x:1.*nested argument at token 2"),
        ("d 0 0 The DT * - - - - * (ARG0*) -\nd 0 1 dog NN * - - - - * * -\n\n", r"x:1.*has no \(V\*\)"),
        ("d 0 0 The DT * - - - - * ?? -\n\n", r"x:1.*bad argument cell '\?\?'"),
        ("d 0 0 The DT\n", r"x:1: expected at least 12 columns"),
    ],
)
def test_conll2012_malformed(tmp_path, content, message):
    (tmp_path / "x").write_text(content)
    with pytest.raises(DataFormatError, match=message):
        read_conll2012_file(tmp_path / "x")


def test_conllu_malformed(tmp_path):
    (tmp_path / "x.conllu").write_text("1\tKim\tKim\n")
    with pytest.raises(DataFormatError, match=r"x.conllu:1: expected at least 11 tab-separated columns"):
        read_conllu_propbank_file(tmp_path / "x.conllu")
    (tmp_path / "y.conllu").write_text("1\tKim\tKim\tX\tX\t_\t0\troot\t_\t_\tgo.01\n\n")
    with pytest.raises(DataFormatError, match=r"y.conllu:1: 1 predicates but \[11\] columns"):
        read_conllu_propbank_file(tmp_path / "y.conllu")


def test_continuation_and_reference_arguments_scored_as_srl_eval():
    from tasks.srl.metric import arguments

    #          0         1         2      3        4         5        6
    gold = ["B-ARG1", "I-ARG1", "B-V", "B-C-ARG1", "I-C-ARG1", "B-R-ARG0", "O"]
    assert arguments(gold) == {("ARG1", ((0, 1), (3, 4))), ("V", ((2, 2),)), ("R-ARG0", ((5, 5),))}
    # all pieces right: the discontinuous ARG1 counts once, as ARG1; R-ARG0 is its own role
    s = srl_scores([gold], [gold])
    assert s["f1"] == 100.0 and set(s["per_role"]) == {"ARG1", "R-ARG0"} and s["per_role"]["ARG1"]["gold"] == 1
    # one piece wrong: the whole ARG1 is wrong (not half right); R-ARG0 still right
    pred = ["B-ARG1", "I-ARG1", "B-V", "B-C-ARG1", "O", "B-R-ARG0", "O"]
    s = srl_scores([gold], [pred])
    assert (s["precision"], s["recall"]) == (50.0, 50.0) and s["per_role"]["ARG1"]["f1"] == 0.0
    # predicting the pieces as two separate ARG1s is also wrong (a single vs a discontinuous argument)
    pred = ["B-ARG1", "I-ARG1", "B-V", "B-ARG1", "I-ARG1", "B-R-ARG0", "O"]
    assert srl_scores([gold], [pred])["per_role"]["ARG1"]["f1"] == 0.0
    # a C-X with no X before it is an ordinary X argument
    assert arguments(["B-C-ARG2", "O", "B-V"]) == {("ARG2", ((0, 0),)), ("V", ((2, 2),))}
    # the continuation joins the most recent ARG1
    assert ("ARG1", ((3, 3), (5, 5))) in arguments(["B-ARG1", "O", "B-V", "B-ARG1", "O", "B-C-ARG1"])
