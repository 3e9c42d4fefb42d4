"""A new NER data set is one YAML file (``conf/data/<name>.yaml``): the ``columns`` reader takes
``token<TAB>tag`` files (WNUT-17, WikiANN) and CoNLL-2003's own columns, IOB1 or IOB2 as the file has
them, with stray byte order marks and WikiANN's language prefix dropped."""

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES, SHARED

from suite_common.errors import DataError
from tasks.ner.reader import read_conll2003_file, read_tagged_columns


def test_columns_reads_conll2003s_own_columns_as_its_reader_does():
    ours, _ = read_tagged_columns(SAMPLES["ner"] / "ner_tiny.conll")
    theirs, _ = read_conll2003_file(SAMPLES["ner"] / "ner_tiny.conll")
    assert ours["tokens"] == theirs["tokens"] and ours["tags"] == theirs["tags"]


def test_token_tag_files_with_byte_order_marks_and_iob2_tags(tmp_path):
    path = tmp_path / "dev"
    bom = "\ufeff"
    path.write_text(f"{bom}New\tB-location\nYork{bom}\tI-location\nrocks\tO\n\nhi\tO\n{bom}\n")
    ds, stats = read_tagged_columns(path)
    assert ds["tokens"] == [["New", "York", "rocks"], ["hi"]]  # no mark in a token; a mark alone is a blank line
    assert ds["tags"] == ds["tags_file"] == [["B-location", "I-location", "O"], ["O"]]  # IOB2 kept as it is
    assert stats["sentences"] == 2 and stats["language_prefix_dropped"] == 0


def test_iob1_spans_become_bio_and_the_file_keeps_its_scheme(tmp_path):
    path = tmp_path / "iob1"
    path.write_text("EU I-ORG\nrejects O\nGerman I-MISC\ncall O\n")
    ds, _ = read_tagged_columns(path)
    assert ds["tags"] == [["B-ORG", "O", "B-MISC", "O"]] and ds["tags_file"] == [["I-ORG", "O", "I-MISC", "O"]]


def test_wikianns_language_prefix_is_dropped_only_when_every_token_has_it(tmp_path):
    path = tmp_path / "wikiann"
    path.write_text("en:Sioux\tB-ORG\nen:Falls\tI-ORG\nen:(\tO\n")
    ds, stats = read_tagged_columns(path)
    assert ds["tokens"] == [["Sioux", "Falls", "("]] and stats["language_prefix_dropped"] == 3
    path.write_text("en:Sioux\tB-ORG\nhttp:x\tO\n")
    assert read_tagged_columns(path)[0]["tokens"] == [["en:Sioux", "http:x"]]


@pytest.mark.parametrize(
    "text, said", [("a\tX-PER\n", r"f:1: bad NER tag 'X-PER'"), ("lonely\n", r"f:1: expected a token and its tag")]
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path, text, said):
    (tmp_path / "f").write_text(text)
    with pytest.raises(DataError, match=said):
        read_tagged_columns(tmp_path / "f")


@pytest.mark.parametrize("name, folder", [("wnut17", "wnut17"), ("wikiann_en", "wikiann_en")])
def test_the_shared_data_sets_are_one_yaml_file_each(name, folder):
    from experiments.config_store import compose
    from experiments.run_config import as_run

    run = as_run(compose(["task=ner", "source=local", f"data={name}"]))
    assert run.data.format == "columns" and run.data.dir.endswith(f"/data/{folder}")
    if (SHARED / "data" / folder).is_dir():  # the real files read as NER data
        ds, stats = read_tagged_columns(SHARED / "data" / folder / "dev")
        assert stats["sentences"] > 1000 and all(t and "\ufeff" not in t for s in ds["tokens"][:200] for t in s)


def test_a_new_data_set_trains_from_its_yaml_file_alone_under_its_own_label(bilm_files, tmp_path):
    """A chunking file (token, POS, chunk tag: the columns format reads the first and the last) trains as a
    tagging data set; the data line names the folder read and the column left out, and the data set's
    ``label`` is the report's row name."""
    o, w = bilm_files
    rows = [line.split() for line in (SAMPLES["ner"] / "ner_tiny.conll").read_text().splitlines()]
    chunks = "\n".join("\t".join(r[:3]) if r and not r[0].startswith("-DOCSTART-") else "" for r in rows)
    (tmp_path / "train").write_text(chunks + "\n")
    (tmp_path / "dev").write_text(chunks + "\n")
    argv = ["task=ner", "data=wnut17", f"data.dir={tmp_path}", "data.label='Tiny chunking'", f"encoder.options={o}",
            f"encoder.weights={w}", f"cache.dir={tmp_path / 'cache'}", f"runs_root={tmp_path / 'runs'}",
            "trainer.max_epochs=1", "trainer.min_updates=0", "task.model.hidden=[8]", "task.model.char_filters=4",
            "task.model.word_dim=8", "logger=none"]  # fmt: skip
    done = subprocess.run([sys.executable, "run.py", *argv], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    data_line = next(line for line in done.stdout.splitlines() if line.startswith("data: "))
    assert data_line.startswith(f"data: the files in {tmp_path} ") and "1 column between them not read" in data_line
    assert "the local copies" not in done.stderr
    # its baseline and table as printed: a Table 1 row beyond the paper, under the data set's label
    printed = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    for step in ("the same without ELMo", "a table of the runs"):
        again = subprocess.run(shlex.split(printed[step]), cwd=REPO, capture_output=True, text=True)
        assert again.returncode == 0, (printed[step], again.stderr[-2000:])
    out = Path(shlex.split(printed["a table of the runs"].split("--out ", 1)[1])[0])
    table = ((REPO / out) if not out.is_absolute() else out).joinpath("table1.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| Tiny chunking (f1; paper: —)"))
    assert "(n=1)" in row.split("|")[2] and "(n=1)" in row.split("|")[3]  # both arms
