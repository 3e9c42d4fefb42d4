"""Task readers, tag conversions and the NER metric."""

import pytest
from conftest import SAMPLES, shared_path

from tasks.ner.metric import span_f1
from tasks.ner.reader import DataFormatError, read_conll2003_file
from tasks.ner.tags import bio_to_bioul, bioul_to_bio, iob1_to_bio
from tasks.sst.reader import DataFormatError as SstFormatError
from tasks.sst.reader import read_sst_file


def test_conll_reader_counts_docstart_and_converts_iob1():
    ds, stats = read_conll2003_file(SAMPLES["ner"] / "ner_tiny.conll")
    assert stats == {"docstart_lines": 2, "sentences": 24, "tokens": sum(len(t) for t in ds["tokens"])}
    assert ds[0]["tokens"][:2] == ["Blue", "Bank"]
    assert ds[0]["tags_file"][:2] == ["I-ORG", "I-ORG"] and ds[0]["tags"][:2] == ["B-ORG", "I-ORG"]


@pytest.mark.parametrize(
    "content,message",
    [
        ("EU NNP I-NP I-ORG\nrejects VBZ I-VP\n", r"x.conll:2: expected 4 columns"),
        ("EU NNP I-NP X-ORG\n", r"x.conll:1: bad NER tag 'X-ORG'"),
        ("-DOCSTART- -X- -X- O\n\n", r"x.conll: no sentences"),
    ],
)
def test_conll_reader_errors_name_file_and_line(tmp_path, content, message):
    (tmp_path / "x.conll").write_text(content)
    with pytest.raises(DataFormatError, match=message):
        read_conll2003_file(tmp_path / "x.conll")


def test_tag_conversions():
    assert iob1_to_bio(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"]) == [
        "B-PER",
        "I-PER",
        "B-PER",
        "O",
        "B-LOC",
        "B-ORG",
    ]
    bio = ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]
    bioul = bio_to_bioul(bio)
    assert bioul == ["B-PER", "I-PER", "L-PER", "O", "U-LOC", "B-LOC", "L-LOC"]
    assert bioul_to_bio(bioul) == bio


def test_span_f1_matches_hand_computation():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-MISC", "I-MISC"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "B-MISC", "O"]]
    # gold spans: PER(0-1) LOC(3) ORG(0) MISC(2-3) = 4; predicted: PER ORG(3) ORG(0) MISC(2) = 4;
    # correct: PER, ORG(0) = 2
    result = span_f1(gold, pred)
    assert result["precision"] == pytest.approx(50.0) and result["recall"] == pytest.approx(50.0)
    assert result["f1"] == pytest.approx(50.0)
    assert result["f1_per_type"]["PER"] == 100.0 and result["f1_per_type"]["LOC"] == 0.0


def test_span_f1_follows_conlleval_for_stray_inside_tags():
    # conlleval starts a chunk at an I- tag that follows O (the IOB1 reading)
    assert span_f1([["O", "B-PER", "I-PER"]], [["O", "I-PER", "I-PER"]])["f1"] == pytest.approx(100.0)


def test_sst_reader_root_labels_binary_and_phrases():
    ds, stats = read_sst_file(SAMPLES["sst"] / "sst_tiny.txt")
    assert len(ds) == 24 and ds[0]["tokens"] == ["a", "great", "film", "."] and ds[0]["label"] == 4
    binary, stats = read_sst_file(SAMPLES["sst"] / "sst_tiny.txt", binary=True)
    assert stats["neutral_dropped"] == 3 and set(binary["label"]) == {0, 1}
    phrases, stats = read_sst_file(SAMPLES["sst"] / "sst_tiny.txt", phrases_min_tokens=3)
    assert stats["phrases"] == 3 and len(phrases) == 24 + 3  # only "(is (a movie))" has >= 3 tokens below a root


def test_a_no_break_space_inside_an_sst_leaf_is_part_of_its_token(tmp_path):
    """SST writes "8 1/2" as one leaf joined by U+00A0; only the tree's own separators split a leaf (an
    ASCII space inside a leaf is refused: tests/experiments/test_strict_inputs.py)."""
    (tmp_path / "s.txt").write_text("(3 (2 (2 Contempt) (2 8\u00a01\\/2)) (2 .))\n", encoding="utf-8")
    ds, _ = read_sst_file(tmp_path / "s.txt")
    assert ds[0]["tokens"] == ["Contempt", "8\u00a01\\/2", "."]


def test_the_whole_sst_training_file_reads_with_its_phrases():
    """Every tree of the real training file, with the paper's phrases of >= 4 tokens (appendix A.8)."""
    path = shared_path("data/sst/train.txt")
    ds, stats = read_sst_file(path, phrases_min_tokens=4)
    trees = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    assert stats["trees"] == trees and len(ds) == trees + stats["phrases"]
    assert any("\u00a0" in t for tokens in ds["tokens"] for t in tokens)


@pytest.mark.parametrize(
    "content,message",
    [
        ("(3 (2 a) (4 b)\n", r"s.txt:1: unbalanced|s.txt:1: malformed"),
        ("(3 (2 a) (4 b))\n\n", r"s.txt:2: empty line"),
        ("(x (2 a))\n", r"s.txt:1: bad label 'x'"),
        ("(7 (2 a) (2 b))\n", r"s.txt:1: label 7 outside 0-4"),
    ],
)
def test_sst_reader_errors(tmp_path, content, message):
    (tmp_path / "s.txt").write_text(content)
    with pytest.raises(SstFormatError, match=message):
        read_sst_file(tmp_path / "s.txt")


def test_span_f1_gives_seqeval_s_own_numbers_to_the_last_bit():
    """One chunking pass per sentence gives exactly what seqeval's scorers give (overall, and F1 per type
    with the other types' tags read as O), on random BIO and stray-I sequences."""
    import random

    from seqeval.metrics import f1_score, precision_score, recall_score

    rng = random.Random(0)
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "I-MISC"]
    for _ in range(30):
        gold = [[rng.choice(tags) for _ in range(rng.randint(1, 12))] for _ in range(rng.randint(1, 20))]
        pred = [[rng.choice(tags) if rng.random() < 0.4 else t for t in s] for s in gold]
        result = span_f1(gold, pred)
        assert result["f1"] == 100 * f1_score(gold, pred)
        assert result["precision"] == 100 * precision_score(gold, pred)
        assert result["recall"] == 100 * recall_score(gold, pred)
        gold_types = sorted({t[2:] for s in gold for t in s if t != "O"})
        assert list(result["f1_per_type"]) == gold_types
        for label in gold_types:
            keep = lambda seq, label=label: [t if t[2:] == label else "O" for t in seq]  # noqa: E731
            assert result["f1_per_type"][label] == round(
                100 * f1_score([keep(s) for s in gold], [keep(s) for s in pred]), 2
            )


def test_span_scores_read_a_datasets_column_as_the_same_list():
    """A ``datasets`` column (read whole) scores as its list does, again and again (the chunks are remembered)."""
    import datasets
    import numpy as np

    from tasks.ner.metric import span_counts

    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "I-ORG"], ["B-MISC"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["O", "I-ORG"], ["B-LOC"]]
    column = datasets.Dataset.from_dict({"tags": gold})["tags"]
    for _ in range(2):
        assert span_f1(column, pred) == span_f1(gold, pred)
        assert np.array_equal(span_counts(column, iter(pred)), [[1, 1, 2], [1, 1, 1], [0, 1, 1]])
    assert span_f1(gold, pred)["f1"] == pytest.approx(200 * 2 / (3 + 4))
