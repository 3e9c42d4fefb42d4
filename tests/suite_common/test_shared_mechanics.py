"""The shared mechanics are single: one atomic writer (``atomic_files``) and one SHA-256 helper
(``hashing``), each tested here, and no other place of the packages renames files into place or
computes SHA-256 itself."""

import hashlib
import os
import re

import pytest
from conftest import REPO

from suite_common.atomic_files import rename_into_place, write_bytes_atomic
from suite_common.hashing import file_sha256, new_sha256, sha256_hex

PACKAGES = (
    "elmo_core",
    "bert_core",
    "static_vectors",
    "encoders",
    "tasks",
    "experiments",
    "benchmarks",
    "reporting",
    "suite_common",
)
HELPERS = {"suite_common/atomic_files.py": r"os\.replace\(", "suite_common/hashing.py": r"hashlib\.sha256\("}


def test_the_hashes_are_sha256_of_bytes_text_and_file_content(tmp_path):
    data = bytes(range(256)) * 5000  # over one read block
    (tmp_path / "f").write_bytes(data)
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest() == file_sha256(tmp_path / "f")
    assert file_sha256(tmp_path / "f", block=7) == sha256_hex(data)  # the block size changes nothing
    assert sha256_hex("é") == hashlib.sha256("é".encode()).hexdigest()
    incremental = new_sha256()
    incremental.update(data[:10])
    incremental.update(data[10:])
    assert incremental.hexdigest() == sha256_hex(data)


def test_a_write_is_complete_or_absent(tmp_path):
    path = tmp_path / "x.bin"
    write_bytes_atomic(path, b"old")

    def broken(tmp):
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    from suite_common.atomic_files import write_atomic
    from suite_common.errors import SuiteError

    with pytest.raises(SuiteError):
        write_atomic(path, broken)
    assert path.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["x.bin"]
    (tmp_path / "d.tmp").mkdir()
    (tmp_path / "d.tmp" / "a").write_text("a")
    rename_into_place(tmp_path / "d.tmp", tmp_path / "d")  # directories too
    assert (tmp_path / "d" / "a").read_text() == "a" and not (tmp_path / "d.tmp").exists()


def test_no_package_renames_or_hashes_outside_the_helpers():
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            text = path.read_text()
            for pattern in (r"os\.replace\(", r"hashlib\.sha256\("):
                if re.search(pattern, text) and HELPERS.get(rel) != pattern:
                    found.append(f"{rel}: {pattern}")
    assert found == []
    assert os.path.exists(REPO / "run.py") and not re.search(
        r"os\.replace\(|hashlib\.sha256\(", (REPO / "run.py").read_text()
    )
