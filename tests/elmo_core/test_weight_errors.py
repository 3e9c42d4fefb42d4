"""Every kind of bad options/weights file gives one clear error naming the file and the key."""

import json

import h5py
import numpy as np
import pytest
from conftest import random_bilm

from elmo_core import BiLMFormatError, load_bilm, save_bilm

LSTM0 = "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell"


@pytest.fixture
def model_files(tmp_path):
    save_bilm(random_bilm(), tmp_path / "options.json", tmp_path / "weights.hdf5")
    return tmp_path / "options.json", tmp_path / "weights.hdf5"


def _edit(path, fn):
    with h5py.File(path, "r+") as f:
        fn(f)


def test_missing_key(model_files):
    o, w = model_files
    _edit(w, lambda f: f.__delitem__(f"{LSTM0}/W_P_0"))
    with pytest.raises(BiLMFormatError, match=rf"weights.hdf5: missing key '{LSTM0}/W_P_0'"):
        load_bilm(o, w)


def test_shape_disagrees_with_options(model_files):
    o, w = model_files

    def swap(f):
        del f["CNN_high_0/W_carry"]
        f["CNN_high_0/W_carry"] = np.zeros((18, 17), np.float32)

    _edit(w, swap)
    with pytest.raises(
        BiLMFormatError,
        match=r"weights.hdf5: key 'CNN_high_0/W_carry' has shape \(18, 17\), "
        r"the options require \(18, 18\)",
    ):
        load_bilm(o, w)


def test_options_disagree_with_weights(model_files):
    o, w = model_files
    d = json.loads(o.read_text())
    d["lstm"]["dim"] = 32
    o.write_text(json.dumps(d))
    with pytest.raises(BiLMFormatError, match=rf"key '{LSTM0}/W_0' has shape"):
        load_bilm(o, w)


def test_truncated_file(model_files):
    o, w = model_files
    data = w.read_bytes()
    w.write_bytes(data[: len(data) // 2])
    with pytest.raises(BiLMFormatError, match=r"weights.hdf5: (not a readable HDF5 file|key '.*' cannot be read)"):
        load_bilm(o, w)


def test_not_hdf5_and_missing_file(model_files, tmp_path):
    o, w = model_files
    w.write_text("this is not hdf5")
    with pytest.raises(BiLMFormatError, match="weights.hdf5: not a readable HDF5 file"):
        load_bilm(o, w)
    with pytest.raises(BiLMFormatError, match="nope.hdf5: weights file not found"):
        load_bilm(o, tmp_path / "nope.hdf5")


def test_nan_weights(model_files):
    o, w = model_files
    _edit(w, lambda f: f["char_embed"].__setitem__((0, 0), np.nan))
    with pytest.raises(BiLMFormatError, match="key 'char_embed' contains NaN"):
        load_bilm(o, w)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.pop("lstm"), "missing key 'lstm'"),
        (lambda d: d["lstm"].pop("projection_dim"), "missing key 'lstm.projection_dim'"),
        (lambda d: d["char_cnn"]["embedding"].pop("dim"), "missing key 'char_cnn.embedding.dim'"),
        (lambda d: d["char_cnn"].__setitem__("activation", "gelu"), "'char_cnn.activation' must be relu or tanh"),
        (lambda d: d["char_cnn"].__setitem__("filters", [[1]]), "'char_cnn.filters' must be"),
    ],
)
def test_bad_options(model_files, mutate, message):
    o, w = model_files
    d = json.loads(o.read_text())
    mutate(d)
    o.write_text(json.dumps(d))
    with pytest.raises(BiLMFormatError, match=f"options.json: {message}"):
        load_bilm(o, w)


def test_options_not_json(model_files):
    o, w = model_files
    o.write_text("{\n  'lstm': 1\n}")
    with pytest.raises(BiLMFormatError, match=r"options.json: not valid JSON \(line 2"):
        load_bilm(o, w)


def test_saving_is_atomic(tmp_path, monkeypatch):
    bilm = random_bilm()
    save_bilm(bilm, tmp_path / "options.json", tmp_path / "weights.hdf5")
    before = (tmp_path / "weights.hdf5").read_bytes()
    import elmo_core.original_format as of

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(of, "original_arrays", lambda b: {"char_embed": np.zeros((2, 2), np.float32), "x": boom()})
    with pytest.raises(KeyboardInterrupt):
        save_bilm(bilm, tmp_path / "options.json", tmp_path / "weights.hdf5")
    assert (tmp_path / "weights.hdf5").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["options.json", "weights.hdf5"]


@pytest.mark.parametrize(
    "block, key, value, message",
    [
        ("char_cnn", "max_characters_per_token", 1e9, "must be between 3 and 1000"),
        ("char_cnn", "max_characters_per_token", "50", "must be a whole number"),
        ("char_cnn", "n_highway", -1, "must be between 0 and 64"),
        ("lstm", "dim", 2.5, "must be a whole number"),
        ("lstm", "projection_dim", 0, "must be between 1 and 65536"),
        ("lstm", "cell_clip", float("nan"), "must be a positive number or null"),
        ("lstm", "proj_clip", -3, "must be a positive number or null"),
    ],
)
def test_options_values_out_of_range_are_one_line_naming_file_and_key(tmp_path, block, key, value, message):
    """A value no biLM can have (a typo, an edited file) is refused naming the key, before any allocation."""
    from elmo_core.options import read_options
    from elmo_core.pretrain import PRESETS

    options = json.loads(json.dumps(PRESETS["small"]))
    options[block][key] = value
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(BiLMFormatError, match=f"options.json: '{block}.{key}' {message}"):
        read_options(path)
