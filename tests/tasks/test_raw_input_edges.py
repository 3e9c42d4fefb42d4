"""Raw text for mode=predict: a predicate is one bracketed word (nested or unclosed brackets are one
line naming the file and line), and invisible characters (a byte order mark on any line, a zero-width
space) are never read as text or tokens."""

import pytest
from run_configs import compose_cfg

from experiments.pipeline import make_task
from experiments.predictor import Predictor
from experiments.run_config import as_run
from suite_common.errors import DataError


@pytest.mark.parametrize("text", ["The [[sat]] on the mat .", "The cat sat on [the mat .", "The [cat sat] ."])
def test_srl_refuses_brackets_that_are_not_one_word(text):
    task = make_task(as_run(compose_cfg(["task=srl"])))
    with pytest.raises(DataError, match=r"in.txt:3: .*a predicate is one word in square brackets"):
        task.read_raw({"line": [3], "text": [text]}, "in.txt")


def test_a_bracketed_word_is_still_the_predicate():
    task = make_task(as_run(compose_cfg(["task=srl"])))
    ds = task.read_raw({"line": [1], "text": ["The cat [sat] ."]}, "in.txt")
    assert ds[0]["tokens"][ds[0]["predicate"]] == "sat"


def test_invisible_characters_are_no_text(monkeypatch):
    task = make_task(as_run(compose_cfg(["task=ner"])))
    seen = {}

    def read_raw(lines, where):
        seen.update(lines)
        raise DataError("stop here")

    monkeypatch.setattr(task, "read_raw", read_raw)
    predictor = Predictor(None, task, None, None)
    with pytest.raises(DataError, match="stop here"):
        predictor.predict_lines(["first line\n", "\ufeffsecond line\n", "\u200b\n", "a\u200b b\n"], "in.txt")
    assert seen["text"] == ["first line", "second line", "a b"] and seen["line"] == [1, 2, 4]
