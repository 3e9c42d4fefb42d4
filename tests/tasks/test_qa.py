"""QA: the official-style normalization and scores, the tokenizer's offsets, span mapping,
best-span decoding, and the reader's errors."""

import json

import pytest
import torch
from conftest import SAMPLES

from tasks.common.tokenizer import tokenize, tokenize_with_offsets
from tasks.qa.metric import exact_match, f1, normalize_answer, squad_scores
from tasks.qa.model import best_spans
from tasks.qa.reader import DataFormatError, char_span_to_tokens, read_squad_file


@pytest.mark.parametrize(
    "text,normalized",
    [
        ("The Amazon", "amazon"),
        ("  an   Apple, a day!  ", "apple day"),
        ("Theatre of the Absurd", "theatre of absurd"),  # 'the' inside a word stays
        ("U.S.A.", "usa"),
        ("Café — naïve “quotes”", "café — naïve “quotes”"),  # only ASCII punctuation is removed, as the official script
        ("A", ""),
    ],
)
def test_normalization_matches_official_rules(text, normalized):
    assert normalize_answer(text) == normalized


def test_em_f1_take_the_best_gold():
    assert exact_match("the Amazon", "Amazon") == 1.0
    assert f1("largest rainforest", "the largest tropical rainforest") == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
    scores = squad_scores(
        {"a": "Amazon river", "b": "1903"}, {"a": ["Amazon", "the Amazon river"], "b": ["1911"], "c": ["x"]}
    )
    assert scores["exact_match"] == pytest.approx(100 / 3) and scores["f1"] == pytest.approx(100 / 3)
    assert scores["unanswered"] == 1


def test_tokenizer_offsets_round_trip():
    text = "The U.S. doesn't say it's $1,000.50 — e.g. well-known \"quotes\" (can't)."
    toks = tokenize_with_offsets(text)
    assert all(text[s:e] == t for t, s, e in toks)
    assert [t for t, _, _ in toks][:7] == ["The", "U.S.", "does", "n't", "say", "it", "'s"]
    assert "".join(text.split()) == "".join(tokenize(text))  # nothing but whitespace is lost


def test_span_mapping_round_trip_on_offsets():
    context = "Marie Curie won the Nobel Prize in 1903, and again in 1911."
    offsets = [(s, e) for _, s, e in tokenize_with_offsets(context)]
    for answer in ("Marie Curie", "Nobel Prize", "1903", "1911", "won the Nobel Prize in 1903"):
        start = context.index(answer)
        i, j = char_span_to_tokens(offsets, start, start + len(answer))
        assert context[offsets[i][0] : offsets[j][1]] == answer
    i, j = char_span_to_tokens(offsets, context.index("903"), context.index("903") + 3)  # inside a token
    assert context[offsets[i][0] : offsets[j][1]] == "1903"


def test_reader_on_fixture_keeps_all_answers():
    ds, stats = read_squad_file(SAMPLES["qa"] / "squad_tiny.json")
    assert stats == {"paragraphs": 2, "questions": 4, "answers_misaligned": 0, "answers_realigned": 0}
    q1 = ds[0]
    assert q1["answers"] == ["The Amazon", "Amazon"] and q1["spans"] == [[0, 1], [1, 1]]
    assert q1["question_tokens"][-1] == "?"


def test_reader_errors(tmp_path):
    (tmp_path / "a.json").write_text('{"data": [\n{"title": 1,}]}')
    with pytest.raises(DataFormatError, match=r"a.json:2: not valid JSON"):
        read_squad_file(tmp_path / "a.json")
    (tmp_path / "b.json").write_text(json.dumps({"data": [{"paragraphs": [{"context": "x"}]}]}))
    with pytest.raises(DataFormatError, match=r"b.json: not SQuAD v1.1 JSON \(missing 'qas'"):
        read_squad_file(tmp_path / "b.json")
    bad = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": "short",
                        "qas": [{"id": "z", "question": "q?", "answers": [{"text": "far", "answer_start": 40}]}],
                    }
                ]
            }
        ]
    }
    (tmp_path / "c.json").write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=r"c.json: question z: answer offset 40 outside the context"):
        read_squad_file(tmp_path / "c.json")


def test_best_span_respects_order_and_length():
    start = torch.tensor([[-1.0, 5.0, 0.0, 0.0, 0.0]])
    end = torch.tensor([[9.0, 0.0, 0.0, 0.0, 4.0]])  # the best end (0) lies before the best start
    assert best_spans(start, end, max_length=10) == [(1, 4)]
    assert best_spans(start, end, max_length=2) == [(0, 0)]  # (1, 4) is too long; -1 + 9 beats 5 + 0


def test_clustered_batches_group_similar_contexts_of_full_size():
    """document-qa's training batches: every question once, batch_size per batch (one remainder),
    lengths within a batch close, and a different order for a different seed."""
    import random

    from tasks.qa.task import clustered_batches

    lengths = [(i * 37) % 381 + 20 for i in range(1000)]
    batches = clustered_batches(lengths, 45, random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert sorted(len(b) for b in batches) == [1000 % 45] + [45] * (1000 // 45)
    spreads = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches if len(b) == 45]
    assert max(spreads) <= 30  # 1000 lengths over 381 values: a batch of 45 spans about 17 tokens
    assert batches == clustered_batches(lengths, 45, random.Random(0))
    assert batches != clustered_batches(lengths, 45, random.Random(1))


def test_unknown_batching_is_refused():
    from omegaconf import OmegaConf

    from suite_common.errors import ConfigError
    from tasks.qa.task import QaTask

    task = QaTask.__new__(QaTask)
    task.cfg = OmegaConf.create({"batching": "sorted", "max_tokens_per_batch": 6000})
    with pytest.raises(ConfigError, match="task.batching"):
        task.batches({"context_tokens": [["a"]]}, 45, shuffle=True)
