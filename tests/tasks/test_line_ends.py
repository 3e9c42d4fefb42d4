"""Files written on Windows (``\\r\\n``) or old Macs (``\\r``) read as the same lines as Unix files, in every
reader (``tasks.common.text_files.text_lines``); a token that holds a space is refused, naming its line."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

from suite_common.errors import DataError
from tasks.ner.reader import read_tagged_columns
from tasks.nli.reader import read_sick_tsv
from tasks.srl.reader import read_conllu_propbank_file


def with_line_ends(source, target, end: bytes):
    target.write_bytes(source.read_bytes().replace(b"\n", end))
    return target


@pytest.mark.parametrize("end", [b"\r\n", b"\r"])
@pytest.mark.parametrize(
    "reader, fixture",
    [
        (read_sick_tsv, "nli/sick_tiny.tsv"),
        (read_conllu_propbank_file, "srl/srl_tiny.conllu"),
        (read_tagged_columns, "ner/ner_tiny.conll"),
    ],
)
def test_windows_and_old_mac_line_ends_read_as_unix_ones(tmp_path, reader, fixture, end):
    task, name = fixture.split("/")
    unix, _ = reader(SAMPLES[task] / name)
    other, _ = reader(with_line_ends(SAMPLES[task] / name, tmp_path / name, end))
    assert other.to_list() == unix.to_list()


@pytest.mark.parametrize(
    "line, said",
    [
        ("New York\tB-LOC\n", r"f:2: column 1 \('New York'\) holds a space"),
        ("New\u00a0York\tB-LOC\n", r"f:2: column 1 \('New\\xa0York'\) holds a space"),
    ],
)
def test_a_token_holding_a_space_is_refused_not_cut(tmp_path, line, said):
    (tmp_path / "f").write_text("EU\tB-ORG\n" + line, encoding="utf-8")
    with pytest.raises(DataError, match=said):
        read_tagged_columns(tmp_path / "f")
