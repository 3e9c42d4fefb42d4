"""Layer probes (§5.3): readers, the deterministic split, 1-NN on centroids, end-to-end runs."""
import json

import pytest
import torch

from tasks import runner
from tasks.probes.pos import DataFormatError, read_tagged
from tasks.probes.wsd import DataFormatError as WsdFormatError
from tasks.probes.wsd import nearest_sense_accuracy, read_senseval, split_80_20

from conftest import FIXTURES
from run_configs import compose_cfg as _cfg


def test_pos_reader(tmp_path):
    sentences, tags = read_tagged(FIXTURES / "pos_tiny.txt")
    assert len(sentences) == 12 and sentences[0] == ["The", "dog", "runs", "."] and tags[0][2] == "VBZ"
    (tmp_path / "bad.txt").write_text("The\tDT\ndog NN\n")
    with pytest.raises(DataFormatError, match=r"bad.txt:2: expected 'token<TAB>tag'"):
        read_tagged(tmp_path / "bad.txt")


def test_senseval_reader_and_split():
    inst = read_senseval(FIXTURES / "wsd_tiny_hard.pos")
    assert len(inst) == 10 and inst[0]["word"] == "hard-a" and inst[0]["sense"] == "HARD1"
    assert inst[0]["tokens"][inst[0]["head"]] == "hard" and inst[0]["tokens"][:3] == ["it", "is", "hard"]
    train, test = split_80_20(inst)
    assert (len(train), len(test)) == (8, 2)
    assert split_80_20(inst) == (train, test)  # deterministic
    assert not {i["id"] for i in train} & {i["id"] for i in test}


def test_senseval_reader_errors(tmp_path):
    (tmp_path / "x.pos").write_text("<corpus><lexelt item='a'><instance id='1'>\n<context>oops</lexelt></corpus>")
    with pytest.raises(WsdFormatError, match=r"x.pos:\d+: not well-formed"):
        read_senseval(tmp_path / "x.pos")


def test_nearest_centroid_hand_worked():
    train = [{"word": "w", "sense": "A"}, {"word": "w", "sense": "A"}, {"word": "w", "sense": "B"}]
    tv = torch.tensor([[1.0, 0.0], [0.8, 0.2], [0.0, 1.0]])
    test = [{"word": "w", "sense": "A"}, {"word": "w", "sense": "B"}, {"word": "w", "sense": "B"},
            {"word": "v", "sense": "Z"}]  # 'v' never seen: no centroid, no fallback sense -> wrong
    sv = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.7, 0.3], [1.0, 0.0]])
    acc, per_word = nearest_sense_accuracy(tv, train, sv, test)
    assert acc == pytest.approx(50.0) and per_word == {"v": 0.0, "w": pytest.approx(66.67)}


def _probe(task, data_dir, tmp_path, bilm_files, *extra):
    o, w = bilm_files
    out = tmp_path / task
    out.mkdir()
    cfg = _cfg([f"task={task}", f"data.dir={data_dir}", f"encoder.options={o}", f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}", *extra])
    runner.train(cfg, out)
    return json.loads((out / "results.json").read_text())


def test_pos_probe_end_to_end(tmp_path, bilm_files):
    r = _probe("probe_pos", FIXTURES, tmp_path, bilm_files, "data.train_file=pos_tiny.txt",
               "data.dev_file=pos_tiny.txt", "task.epochs=30", "task.lr=0.05", "task.batch_size=16")
    acc = r["dev"]["accuracy_per_layer"]
    assert set(acc) == {"0", "1", "2", "mix"} and all(0 <= v <= 100 for v in acc.values())
    assert acc["0"] > 50  # the token layer alone separates this tiny tag set on its training data
    assert abs(sum(r["mix_weights"]) - 1) < 1e-5 and r["bilm"]["sha256"]


def test_wsd_probe_end_to_end(tmp_path, bilm_files):
    r = _probe("probe_wsd", FIXTURES, tmp_path, bilm_files, "data.words=[wsd_tiny_hard,wsd_tiny_line]")
    assert set(r["dev"]["accuracy_per_layer"]) == {"0", "1", "2", "average", "most_frequent_sense"}
    assert set(r["dev"]["accuracy_per_word"]["1"]) == {"hard-a", "line-n"}
    assert r["data_stats"] == {"train_instances": 16, "test_instances": 4, "senses": 4}
