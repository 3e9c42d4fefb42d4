"""The coreference metrics against the reference scorer (``scorer.pl`` v8.01 of
conll/reference-coreference-scorers), on test cases of our own of every kind its test suite has for
MUC, B³ and CEAF-e: a perfect response, missing and false-alarm mentions and entities, a
partly-overlapping mention in an aligned and in an unaligned entity, a mention repeated in the same
cluster, repeated across clusters (stacked marks ``(2(3``) and repeated many times, everything in
one cluster, only singletons, a minimal two-column file with a header without a part, and a key
document missing from the response. The expected numerators and denominators are what
``scorer.pl <metric> key response none`` printed for these files (2026-11-23, perl 5.36).

Key clusters over 12 tokens: {0}, {2-3, 6}, {5-7, 9, 11} (cluster ids are arbitrary)."""

import pytest

from tasks.coref.metric import score_files

KEY = {0: "(7)", 2: "(4", 3: "4)", 5: "(9", 6: "(4)", 7: "9)", 9: "(9)", 11: "(9)"}
CASES = {
    "perfect": {0: "(70)", 2: "(41", 3: "41)", 5: "(92", 6: "(41)", 7: "92)", 9: "(92)", 11: "(92)"},
    "missing": {0: "(1)", 5: "(2", 7: "2)", 11: "(2)"},
    "false_alarms": {
        0: "(1)",
        1: "(5)",
        2: "(4",
        3: "4)",
        6: "(4)",
        8: "(4)",
        5: "(2",
        7: "2)",
        9: "(2)",
        10: "(2)",
        11: "(2)",
        4: "(6)",
    },
    "missing_and_false": {0: "(1)", 2: "(4", 3: "4)", 8: "(4)", 5: "(2", 7: "2)", 10: "(2)", 4: "(6)"},
    "overlap_in_aligned": {0: "(1)", 2: "(4", 3: "4)|(4)", 6: "(4)", 5: "(2", 7: "2)", 9: "(2)"},
    "overlap_in_unaligned": {0: "(1)", 2: "(4", 3: "4)|8)", 6: "(4)", 5: "(2", 7: "2)", 9: "(2)", 1: "(8"},
    "repeat_in_same_cluster": {0: "(1)", 2: "(4(4", 3: "4)4)", 6: "(4)", 5: "(2", 7: "2)", 9: "(2)"},
    "repeat_across_clusters": {0: "(1)", 2: "(4", 3: "4)", 5: "(2(3", 7: "3)2)", 9: "(2)", 10: "(3)", 6: "(4)"},
    "many_repeats": {0: "(1)", 5: "(2(3(3(3(3(3", 7: "3)3)3)3)3)2)", 9: "(2)", 10: "(3)", 2: "(4", 3: "4)"},
    "all_in_one": {0: "(1)", 2: "(1", 3: "1)", 5: "(1", 6: "(1)", 7: "1)", 9: "(1)", 11: "(1)"},
    "all_singletons": {0: "(1)", 2: "(2", 3: "2)", 5: "(3", 6: "(4)", 7: "3)", 9: "(5)", 11: "(6)"},
}
# (recall numerator, recall denominator, precision numerator, precision denominator) per metric
EXPECTED = {
    "perfect": {"muc": (3.0, 3.0, 3.0, 3.0), "bcub": (6.0, 6.0, 6.0, 6.0), "ceafe": (3.0, 3.0, 3.0, 3.0)},
    "missing": {"muc": (1.0, 3.0, 1.0, 1.0), "bcub": (2.3333333333, 6.0, 3.0, 3.0), "ceafe": (1.8, 3.0, 1.8, 2.0)},
    "false_alarms": {
        "muc": (3.0, 3.0, 3.0, 5.0),
        "bcub": (6.0, 6.0, 4.5833333333, 10.0),
        "ceafe": (2.6571428571, 3.0, 2.6571428571, 5.0),
    },
    "missing_and_false": {
        "muc": (0.0, 3.0, 0.0, 2.0),
        "bcub": (1.8333333333, 6.0, 2.0, 6.0),
        "ceafe": (1.9, 3.0, 1.9, 4.0),
    },
    "overlap_in_aligned": {
        "muc": (2.0, 3.0, 2.0, 3.0),
        "bcub": (4.3333333333, 6.0, 4.3333333333, 6.0),
        "ceafe": (2.6, 3.0, 2.6, 3.0),
    },
    "overlap_in_unaligned": {
        "muc": (2.0, 3.0, 2.0, 2.0),
        "bcub": (4.3333333333, 6.0, 5.0, 6.0),
        "ceafe": (2.8, 3.0, 2.8, 4.0),
    },
    "repeat_in_same_cluster": {
        "muc": (2.0, 3.0, 2.0, 2.0),
        "bcub": (4.3333333333, 6.0, 5.0, 5.0),
        "ceafe": (2.8, 3.0, 2.8, 3.0),
    },
    "repeat_across_clusters": {
        "muc": (2.0, 3.0, 2.0, 2.0),
        "bcub": (4.3333333333, 6.0, 5.0, 6.0),
        "ceafe": (2.8, 3.0, 2.8, 4.0),
    },
    "many_repeats": {
        "muc": (1.0, 3.0, 1.0, 1.0),
        "bcub": (2.8333333333, 6.0, 4.0, 5.0),
        "ceafe": (2.4666666667, 3.0, 2.4666666667, 4.0),
    },
    "all_in_one": {
        "muc": (3.0, 3.0, 3.0, 5.0),
        "bcub": (6.0, 6.0, 2.3333333333, 6.0),
        "ceafe": (0.6666666667, 3.0, 0.6666666667, 1.0),
    },
    "all_singletons": {
        "muc": (0.0, 3.0, 0.0, 0.0),
        "bcub": (3.0, 6.0, 6.0, 6.0),
        "ceafe": (2.1666666667, 3.0, 2.1666666667, 6.0),
    },
    "minimal_no_part": {
        "muc": (0.0, 3.0, 0.0, 2.0),
        "bcub": (1.8333333333, 6.0, 2.0, 6.0),
        "ceafe": (1.9, 3.0, 1.9, 4.0),
    },
    "second_doc_missing": {
        "muc": (1.0, 4.0, 1.0, 1.0),
        "bcub": (2.3333333333, 8.0, 3.0, 3.0),
        "ceafe": (1.8, 4.0, 1.8, 2.0),
    },
}
NAMES = {"muc": "muc", "bcub": "b_cubed", "ceafe": "ceafe"}


def write(path, marks, minimal=False, part=True, second_doc=None):
    lines = ["#begin document (own/doc); part 000" if part else "#begin document (own/doc);"]
    for i in range(12):
        m = marks.get(i, "-")
        lines.append(f"own/doc\t{m}" if minimal else f"own/doc\t0\t{i}\tw{i}\t{m}")
        if i == 4:
            lines.append("")
    lines += ["", "#end document"]
    if second_doc is not None:
        lines += ["#begin document (own/two); part 000"]
        lines += [f"own/two\t0\t{i}\tv{i}\t{second_doc.get(i, '-')}" for i in range(4)] + ["", "#end document"]
    path.write_text("\n".join(lines) + "\n")


def files(tmp_path, case):
    key, response = tmp_path / "key", tmp_path / "response"
    if case == "minimal_no_part":
        write(key, KEY, minimal=True, part=False)
        write(response, CASES["missing_and_false"], minimal=True, part=False)
    elif case == "second_doc_missing":
        write(key, KEY, second_doc={0: "(1", 1: "1)", 3: "(1)"})
        write(response, CASES["missing"])
    else:
        write(key, KEY)
        write(response, CASES[case])
    return key, response


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_metrics_equal_the_reference_scorer(case, tmp_path):
    ours = score_files(*files(tmp_path, case))
    for metric, (rn, rd, pn, pd) in EXPECTED[case].items():
        got = ours[NAMES[metric]]
        assert got["recall"] == pytest.approx(100 * rn / rd if rd else 0.0, abs=1e-8), metric
        assert got["precision"] == pytest.approx(100 * pn / pd if pd else 0.0, abs=1e-8), metric


def test_a_repeated_key_mention_counts_where_it_first_appears(tmp_path):
    """Without the scorer's rule, a mention in two clusters inflates B³ recall and changes MUC."""
    from tasks.coref.metric import coref_scores

    key = [[(0, 1), (3, 4)]]
    scores = coref_scores([key], [[[(0, 1), (3, 4)], [(3, 4), (6, 6)]]])
    assert scores["b_cubed"]["recall"] == pytest.approx(100.0) and scores["muc"]["recall"] == pytest.approx(100.0)
    assert scores["b_cubed"]["precision"] == pytest.approx(100 * (2 * 2 / 2) / 3)  # {0-1,3-4}: 2 of 2; {6-6}: none
