"""The SRL metric against the official CoNLL-2005 scorer (``srl-eval.pl``, the copy that
allennlp-models ships in ``structured_prediction/tools/``), on hand-made propositions: reference
(``R-``) and continuation (``C-``) arguments, a continuation with no argument before it, two
continuation pieces, a multi-word verb with ``C-V``, an ``I-`` tag that starts a span, and
propositions with no argument at all. The expected counts (correct, excess, missed) are what
``perl srl-eval.pl gold.props predicted.props`` printed on the ``props`` files ``write_props``
writes for these cases (2026-11-23, perl 5.36)."""

import pytest

from tasks.srl.metric import srl_scores, write_props

TOKENS = "The man who saw it said that he left early".split()
CASES = {  # name: (gold sentences, predicted sentences, (correct, excess, missed))
    "reference_and_continuation": (
        [
            (
                TOKENS,
                [3, 5, 8],
                [
                    ["B-ARG0", "I-ARG0", "B-R-ARG0", "B-V", "B-ARG1", "O", "O", "O", "O", "O"],
                    ["B-ARG0", "I-ARG0", "I-ARG0", "I-ARG0", "I-ARG0", "B-V", "B-ARG1", "I-ARG1", "I-ARG1", "I-ARG1"],
                    ["O", "O", "O", "O", "O", "O", "O", "B-ARG0", "B-V", "B-ARGM-TMP"],
                ],
            ),
            ("A B C D E".split(), [2], [["B-ARG1", "O", "B-V", "B-C-ARG1", "I-C-ARG1"]]),
            ("x y z".split(), [1], [["O", "B-V", "O"]]),
        ],
        [
            (
                TOKENS,
                [3, 5, 8],
                [
                    ["B-ARG0", "I-ARG0", "B-ARG0", "B-V", "B-ARG1", "O", "O", "O", "O", "O"],
                    ["B-ARG0", "I-ARG0", "I-ARG0", "I-ARG0", "I-ARG0", "B-V", "B-ARG1", "I-ARG1", "I-ARG1", "O"],
                    ["O", "O", "O", "O", "O", "O", "O", "B-ARG0", "B-V", "B-ARGM-TMP"],
                ],
            ),
            ("A B C D E".split(), [2], [["B-ARG1", "O", "B-V", "B-ARG1", "I-ARG1"]]),
            ("x y z".split(), [1], [["B-ARG0", "B-V", "O"]]),
        ],
        (5, 5, 3),
    ),
    "continuation_without_its_argument": (
        [("a b c d".split(), [0], [["B-V", "B-C-ARG1", "O", "B-ARG2"]])],
        [("a b c d".split(), [0], [["B-V", "B-ARG1", "O", "B-ARG2"]])],
        (2, 0, 0),
    ),
    "multiword_verb_with_C-V": (
        [("pick it up now".split(), [0], [["B-V", "B-ARG1", "B-C-V", "B-ARGM-TMP"]])],
        [("pick it up now".split(), [0], [["B-V", "B-ARG1", "O", "B-ARGM-TMP"]])],
        (2, 0, 0),
    ),
    "I_tag_starting_a_span": (
        [("a b c d".split(), [1], [["O", "B-V", "B-ARG1", "I-ARG1"]])],
        [("a b c d".split(), [1], [["O", "B-V", "I-ARG1", "I-ARG1"]])],
        (1, 0, 0),
    ),
    "empty_propositions": (
        [("a b c".split(), [1], [["O", "B-V", "O"]])],
        [("a b c".split(), [1], [["O", "B-V", "O"]])],
        (0, 0, 0),
    ),
    "empty_gold_proposition_predicted_arguments": (
        [("a b c".split(), [1], [["O", "B-V", "O"]])],
        [("a b c".split(), [1], [["B-ARG0", "B-V", "B-ARG1"]])],
        (0, 2, 0),
    ),
    "two_continuation_pieces_one_missed": (
        [("a b c d e f".split(), [2], [["B-ARG1", "O", "B-V", "B-C-ARG1", "O", "B-C-ARG1"]])],
        [("a b c d e f".split(), [2], [["B-ARG1", "O", "B-V", "B-C-ARG1", "O", "O"]])],
        (0, 1, 1),
    ),
    "reference_and_continuation_of_one_argument": (
        [("a b c d e".split(), [3], [["B-ARG0", "B-R-ARG0", "B-C-ARG0", "B-V", "O"]])],
        [("a b c d e".split(), [3], [["B-ARG0", "B-R-ARG0", "B-C-ARG0", "B-V", "B-ARG1"]])],
        (2, 1, 0),
    ),
}


def _tags(sentences):
    return [tags for _, _, per_predicate in sentences for tags in per_predicate]


@pytest.mark.parametrize("case", sorted(CASES))
def test_f1_equals_srl_eval(case, tmp_path):
    gold, pred, (correct, excess, missed) = CASES[case]
    write_props(tmp_path / "gold.props", gold)  # the files the scorer read; written here as a smoke test
    write_props(tmp_path / "pred.props", pred)
    ours = srl_scores(_tags(gold), _tags(pred))
    p = 100 * correct / (correct + excess) if correct + excess else 0.0
    r = 100 * correct / (correct + missed) if correct + missed else 0.0
    assert ours["precision"] == pytest.approx(p) and ours["recall"] == pytest.approx(r)
    assert ours["f1"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


def test_props_file_layout(tmp_path):
    gold = CASES["reference_and_continuation"][0]
    write_props(tmp_path / "g.props", gold[1:2])
    assert (tmp_path / "g.props").read_text().splitlines() == [
        "-\t(ARG1*)",
        "-\t*",
        "C\t(V*)",
        "-\t(C-ARG1*",
        "-\t*)",
        "",
    ]
