"""Reader fuzzing: every fixture format, corrupted in many small seeded ways (a column dropped or
duplicated, a line cut, deleted or repeated, bad bytes, stray brackets, the file truncated), either
still loads or fails with the project's ``DataError`` naming the file (and the line, where the
damage is on one) — never an exception from deep inside a reader."""

import json
import random
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, SHARED, shared_path
from omegaconf import OmegaConf

from experiments.run_config import task_config_class
from suite_common.errors import DataError
from tasks.coref.task import CorefTask
from tasks.ner.task import NerTask
from tasks.nli.task import NliTask
from tasks.probe_pos.reader import read_tagged
from tasks.probes.wsd import read_senseval
from tasks.qa.task import QaTask
from tasks.srl.task import SrlTask
from tasks.sst.task import SstTask

MUTATIONS_PER_FORMAT = 100


def _task_reader(task_cls, name, fmt):
    task = task_cls(task_config_class(name)())  # the task's default settings
    return lambda path: task.read_file(path, OmegaConf.create({"format": fmt}), "train")


def _snli_fixture(tmp_path: Path) -> Path:
    rows = [
        {"pairID": f"p{i}", "sentence1": "A man is playing a guitar .", "sentence2": s, "gold_label": g}
        for i, (s, g) in enumerate(
            [
                ("A man plays music .", "entailment"),
                ("A woman sleeps .", "contradiction"),
                ("The man is famous .", "neutral"),
                ("Someone plays .", "-"),
            ]
        )
    ]
    path = tmp_path / "snli_tiny.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


FORMATS = {  # name -> (fixture, reader)
    "ner/conll2003": (FIXTURES / "ner_tiny.conll", _task_reader(NerTask, "ner", "conll2003")),
    "sst/ptb": (FIXTURES / "sst_tiny.txt", _task_reader(SstTask, "sst", "ptb")),
    "srl/conllu": (FIXTURES / "srl_tiny.conllu", _task_reader(SrlTask, "srl", "conllu")),
    "srl/conll2012": (
        SHARED / "data" / "fixtures" / "conll2012" / "example.gold_conll",
        _task_reader(SrlTask, "srl", "conll2012"),
    ),
    "nli/sick": (FIXTURES / "sick_tiny.tsv", _task_reader(NliTask, "nli", "sick")),
    "nli/snli": (None, _task_reader(NliTask, "nli", "snli")),
    "qa/squad": (FIXTURES / "squad_tiny.json", _task_reader(QaTask, "qa", "squad")),
    "coref/conll2012": (FIXTURES / "coref_tiny.conll", _task_reader(CorefTask, "coref", "conll2012")),
    "probe_pos/tagged": (FIXTURES / "pos_tiny.txt", read_tagged),
    "probe_wsd/senseval": (FIXTURES / "wsd_tiny_hard.pos", read_senseval),
}


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes, int | None]:
    """One corruption of ``data``: (what was done, the corrupted bytes, the 1-based line it touched)."""
    lines = _lines(data)
    filled = [i for i, line in enumerate(lines) if line.strip()]
    i = rng.choice(filled)
    line = lines[i]
    sep = b"\t" if b"\t" in line else b" "
    fields = line.split(sep)
    kind = rng.choice(
        [
            "drop_column",
            "duplicate_column",
            "cut_line",
            "delete_line",
            "repeat_line",
            "bad_bytes",
            "bracket",
            "truncate_file",
            "replace_char",
        ]
    )
    if kind == "drop_column" and len(fields) > 1:
        del fields[rng.randrange(len(fields))]
        lines[i] = sep.join(fields)
    elif kind == "duplicate_column":
        k = rng.randrange(len(fields))
        fields.insert(k, fields[k])
        lines[i] = sep.join(fields)
    elif kind == "cut_line":
        lines[i] = line[: rng.randrange(len(line))]
    elif kind == "delete_line":
        del lines[i]
    elif kind == "repeat_line":
        lines.insert(i, line)
    elif kind == "bad_bytes":
        k = rng.randrange(len(line) + 1)
        lines[i] = line[:k] + rng.choice([b"\xff\xfe", b"\xc3", b"\x00", b"\xe2\x82"]) + line[k:]
    elif kind == "bracket":
        k = rng.randrange(len(line) + 1)
        lines[i] = line[:k] + rng.choice([b"(", b")", b"*)", b"(A0*", b"{", b"]", b"<", b"|", b'"']) + line[k:]
    elif kind == "truncate_file":
        cut = rng.randrange(1, len(data))
        return kind, data[:cut], data[:cut].count(b"\n") + 1
    else:
        k = rng.randrange(len(line))
        lines[i] = line[:k] + bytes([rng.choice(b"0123456789-_*()|:=abcXYZ \t")]) + line[k + 1 :]
    return kind, b"\n".join(lines), i + 1


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_corrupted_files_load_or_fail_naming_file_and_line(name, tmp_path):
    fixture, reader = FORMATS[name]
    if fixture is not None and not fixture.is_relative_to(FIXTURES):
        shared_path(str(fixture.relative_to(SHARED)))  # fails under CI, skips elsewhere
    data = (fixture or _snli_fixture(tmp_path)).read_bytes()
    reader(fixture or _snli_fixture(tmp_path))  # the intact file loads
    rng = random.Random(f"{name}-fuzz")
    failures, loaded, refused = [], 0, 0
    for n in range(MUTATIONS_PER_FORMAT):
        kind, corrupted, line = mutate(data, rng)
        path = tmp_path / f"m{n}{(fixture or Path('x.jsonl')).suffix}"
        path.write_bytes(corrupted)
        try:
            reader(path)
            loaded += 1
        except DataError as e:
            refused += 1
            message = str(e)
            if str(path) not in message:
                failures.append(f"{kind} at line {line}: message does not name the file: {message}")
            elif (
                re.search(re.escape(str(path)) + r":\d+", message) is None
                and "line" not in message
                and not _whole_file_message(message)
            ):
                failures.append(f"{kind} at line {line}: message names no line: {message}")
        except Exception as e:  # noqa: BLE001 - anything else is the failure this test looks for
            failures.append(f"{kind} at line {line}: {type(e).__name__}: {e}")
    assert not failures, f"{name}: {len(failures)} of {MUTATIONS_PER_FORMAT} corruptions:\n" + "\n".join(failures)
    assert refused > 0  # the corruptions are real: some of them are refused


def _whole_file_message(message: str) -> bool:
    """Damage no single line holds (a file cut short, a document without its end, nothing left)."""
    return bool(
        re.search(
            r"no (sentences|documents|questions|instances|examples|trees|pairs|predicates)|has no '#end document'|"
            r"not SQuAD|instance \S+ has no|question \S+",
            message,
        )
    )


def test_undecodable_bytes_name_file_line_and_column(tmp_path):
    from tasks.common.text_files import read_text, text_lines

    path = tmp_path / "x.txt"
    path.write_bytes(b"good line\nsecond \xff line\n")
    with pytest.raises(DataError, match=rf"{path}:2: not UTF-8 text \(byte 0xff at column 8\)"):
        list(text_lines(path))
    with pytest.raises(DataError, match=rf"{path}:2: not UTF-8 text \(byte 0xff at column 8\)"):
        read_text(path)
