"""The whole-process embed benchmark's suite side on a small biLM: the command it times writes the layout the
AllenNLP user's script writes (one (3, tokens, dim) dataset per line index), and the comparison reads both
files key by key."""

from __future__ import annotations

import shutil

import h5py
import numpy as np

from benchmarks.embed_whole_process import commands, layers_apart, timed


def test_the_timed_suite_command_writes_the_layout_the_allennlp_script_writes(bilm_files, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(bilm_files[0], model / "options.json")
    shutil.copy(bilm_files[1], model / "weights.hdf5")
    text = tmp_path / "long.txt"
    lines = ["EU rejects German call", "Peter Blackburn", "BRUSSELS 1996-08-22", "The European Commission said", "x"]
    text.write_text("".join(line + "\n" for line in lines))
    suite = tmp_path / "suite.hdf5"
    seconds, _ = timed(commands("suite", None, model, text, suite, 2, 1), threads=1)
    assert seconds > 0
    other = tmp_path / "other.hdf5"  # the AllenNLP script's layout, holding the suite's layers moved a little
    with h5py.File(suite, "r") as f, h5py.File(other, "w") as g:
        for i, line in enumerate(lines):
            layers = f[str(i)][()]
            assert layers.shape[:2] == (3, len(line.split()))
            g.create_dataset(str(i), data=layers + (0.5 if i == 3 else 0.0))
    assert layers_apart(suite, suite) == 0.0
    assert np.isclose(layers_apart(suite, other), 0.5)
    allennlp = commands("allennlp", tmp_path / "python", model, text, other, 64, 2)
    assert allennlp[1].endswith("allennlp_embed_file.py") and allennlp[-4:] == ["--batch-size", "64", "--threads", "2"]
