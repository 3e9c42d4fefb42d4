"""Reader fuzzing: every fixture format, corrupted in many small seeded ways (a column dropped or
duplicated, a line cut, deleted or repeated, bad bytes, stray brackets, the file truncated), either
still loads or fails with the project's ``DataError`` naming the file (and the line, where the
damage is on one) — never an exception from deep inside a reader."""

import json
import random
import re
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES, SHARED, shared_path
from omegaconf import OmegaConf
from task_setups import TRAINABLE

from experiments.config_store import task_file
from experiments.run_config import task_config_class
from suite_common.errors import DataError
from tasks.probes.wsd import read_senseval
from tasks.registry import task_class

MUTATIONS_PER_FORMAT = 100


def _task_reader(name, data=None):
    """Task ``name``'s own reading of a file, with its default settings and ``data`` (its format)."""
    task = task_class(name)(task_config_class(name)())
    return lambda path: task.read_file(path, OmegaConf.create(data or {}), "train")


def _sample_formats() -> dict:
    """Each task's tiny sample (``sources.sample`` in its task file), read as that source reads it."""
    formats = {}
    for name in TRAINABLE:
        sample, data = task_file(name).sources.get("sample"), task_file(name).data
        if sample is not None:
            settings = {k: v for k, v in OmegaConf.to_container(sample).items() if k != "dir"}
            file = REPO / sample.dir / settings.get("train_file", data.get("train_file"))
            formats[name, "sample"] = (
                file,
                _task_reader(name, {"format": settings.get("format", data.get("format"))}),
            )
    return formats


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


FORMATS = {  # (task, format) -> (file, reader): every sample, and the formats no sample is in
    **_sample_formats(),
    ("srl", "conll2012"): (
        SHARED / "data" / "fixtures" / "conll2012" / "example.gold_conll",
        _task_reader("srl", {"format": "conll2012"}),
    ),
    ("nli", "snli"): (None, _task_reader("nli", {"format": "snli"})),
    ("probe_wsd", "senseval"): (SAMPLES["probe_wsd"] / "wsd_tiny_hard.pos", read_senseval),
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


@pytest.mark.every_task
@pytest.mark.parametrize("task,form", sorted(FORMATS))
def test_corrupted_files_load_or_fail_naming_file_and_line(task, form, tmp_path):
    name = f"{task}/{form}"
    fixture, reader = FORMATS[task, form]
    if fixture is not None and not fixture.is_relative_to(REPO):
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
