import h5py
import numpy as np
import pytest
import torch
from conftest import random_bilm

from elmo_core import batch_to_ids, save_bilm
from elmo_core.embed import InputFormatError, main, read_sentences


@pytest.fixture
def model(tmp_path):
    bilm = random_bilm()
    save_bilm(bilm, tmp_path / "o.json", tmp_path / "w.hdf5")
    return bilm, ["--options", str(tmp_path / "o.json"), "--weights", str(tmp_path / "w.hdf5"), "--no-progress"]


def test_stateless_output_in_input_order(model, tmp_path):
    bilm, args = model
    lines = ["a b c", "a much longer sentence than the others here", "z", "the cat sat"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    main(args + ["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.hdf5"), "--batch-size", "2"])
    with h5py.File(tmp_path / "o.hdf5") as f, torch.no_grad():
        for i, line in enumerate(lines):
            expected = bilm(batch_to_ids([line.split()])).layers[:, 0].numpy()
            np.testing.assert_allclose(f[str(i)][...], expected, atol=1e-6)


@pytest.mark.parametrize(
    "content,message",
    [
        (b"fine line\n\nnext\n", r"in.txt:2: empty line"),
        (b"ok\n   \n", r"in.txt:2: empty line"),
        (b"ok\nbad \xff byte\n", r"in.txt:2: not valid UTF-8"),
        (b"", r"in.txt: no sentences"),
    ],
)
def test_bad_input_reports_line(tmp_path, content, message):
    (tmp_path / "in.txt").write_bytes(content)
    with pytest.raises(InputFormatError, match=message):
        read_sentences(tmp_path / "in.txt")


def test_bad_input_exits_cleanly_without_output(model, tmp_path):
    _, args = model
    (tmp_path / "in.txt").write_bytes(b"one\n\n")
    with pytest.raises(SystemExit, match="in.txt:2: empty line"):
        main(args + ["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.hdf5")])
    assert not (tmp_path / "o.hdf5").exists()


@pytest.mark.parametrize("mode", ["skip", "keep"])
def test_empty_lines_skipped_or_kept_by_option(model, tmp_path, mode):
    """Dataset names stay line indices; ``keep`` stores an empty line as 0 tokens, ``skip`` leaves it out."""
    import json

    bilm, args = model
    (tmp_path / "in.txt").write_text("a b\n\n  \nthe cat sat\n")
    main(args + ["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.hdf5"), "--empty-lines", mode])
    with h5py.File(tmp_path / "o.hdf5") as f, torch.no_grad():
        index = json.loads(f["sentence_to_index"][0])
        np.testing.assert_allclose(
            f["3"][...], bilm(batch_to_ids([["the", "cat", "sat"]])).layers[:, 0].numpy(), atol=1e-6
        )
        assert f.attrs["empty_lines"] == mode and f.attrs["lines"] == 4
        if mode == "skip":
            assert sorted(k for k in f if k != "sentence_to_index") == ["0", "3"]
            assert index == {"a b": "0", "the cat sat": "3"}
        else:
            assert f["1"].shape == (f["0"].shape[0], 0, f["0"].shape[2]) and f["2"].shape[1] == 0
            assert index["a b"] == "0" and index["the cat sat"] == "3" and index[""] in ("1", "2")


def test_interrupt_leaves_no_partial_file(model, tmp_path, monkeypatch):
    _, args = model
    (tmp_path / "in.txt").write_text("a\nb\nc\n")
    import elmo_core.embed as embed

    def interrupted(*a, **k):
        yield 0, np.zeros((3, 1, 16), np.float32)
        raise KeyboardInterrupt

    monkeypatch.setattr(embed, "embed_sentences", interrupted)
    with pytest.raises(KeyboardInterrupt):
        main(args + ["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.hdf5")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "o.json", "w.hdf5"]


def test_no_biLM_arguments_embeds_with_the_embedded_biLM(tmp_path):
    """``--input F --output O`` alone uses the embedded biLM; ``--model DIR`` names another."""
    import h5py

    from elmo_core.embed import main
    from elmo_core.pretrained import model_dir

    (tmp_path / "in.txt").write_text("The cat sat .\nA dog\n")
    main(["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "a.hdf5"), "--no-progress"])
    main(
        [
            "--model",
            str(model_dir("small")),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "b.hdf5"),
            "--no-progress",
        ]
    )
    with h5py.File(tmp_path / "a.hdf5") as a, h5py.File(tmp_path / "b.hdf5") as b:
        assert a["0"].shape == b["0"].shape and a["0"].shape[1] == 4 and (a["0"][()] == b["0"][()]).all()
    with pytest.raises(SystemExit):
        main(["--options", "x.json", "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "c.hdf5")])


def test_perplexity_without_a_model_uses_the_embedded_biLM(tmp_path, capsys):
    """Every tool that needs a biLM defaults to the embedded one."""
    import json

    from elmo_core.perplexity import main as perplexity
    from elmo_core.pretrained import model_dir

    (tmp_path / "heldout.txt").write_text("the cat sat on the mat .\nit was a good day .\n")
    perplexity(["--heldout", str(tmp_path / "heldout.txt"), "--batch-size", "2", "--unroll-steps", "4"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["model"] == str(model_dir()) and report["average"] > 1 and report["tokens"] > 0


def test_perplexity_by_source_says_why_there_is_no_split(tmp_path, capsys):
    """``--by-source`` without a ``stats.json`` beside the file: whole-file figures and one line saying why."""
    import json

    from elmo_core.perplexity import main as perplexity

    (tmp_path / "heldout.txt").write_text("the cat sat on the mat .\nit was a good day .\n")
    perplexity(["--heldout", str(tmp_path / "heldout.txt"), "--batch-size", "2", "--unroll-steps", "4", "--by-source"])
    captured = capsys.readouterr()
    report = json.loads(captured.out.strip().splitlines()[-1])
    assert "by_source_stateful" not in report and report["stateful"]["average"] > 1
    assert f"no per-source perplexity: no {tmp_path / 'stats.json'}" in captured.err
    assert report["by_source_missing"].startswith(f"no {tmp_path / 'stats.json'}")
