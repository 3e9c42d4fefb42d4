"""Layer probes (§5.3): readers, the deterministic split, 1-NN on centroids, end-to-end runs."""

import json

import pytest
import torch
from conftest import SAMPLES
from run_configs import compose_cfg as _cfg

from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import DataError as DataFormatError
from tasks.probe_pos.reader import read_tagged
from tasks.probes.wsd import DataFormatError as WsdFormatError
from tasks.probes.wsd import nearest_sense_accuracy, read_senseval, split_80_20


def test_pos_reader(tmp_path):
    sentences, tags = read_tagged(SAMPLES["probe_pos"] / "pos_tiny.txt")
    assert len(sentences) == 12 and sentences[0] == ["The", "dog", "runs", "."] and tags[0][2] == "VBZ"
    (tmp_path / "bad.txt").write_text("The\tDT\ndog NN\n")
    with pytest.raises(DataFormatError, match=r"bad.txt:2: expected 'token<TAB>tag'"):
        read_tagged(tmp_path / "bad.txt")


def test_senseval_reader_and_split():
    inst = read_senseval(SAMPLES["probe_wsd"] / "wsd_tiny_hard.pos")
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
    test = [
        {"word": "w", "sense": "A"},
        {"word": "w", "sense": "B"},
        {"word": "w", "sense": "B"},
        {"word": "v", "sense": "Z"},
    ]  # 'v' never seen: no centroid, no fallback sense -> wrong
    sv = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.7, 0.3], [1.0, 0.0]])
    acc, per_word = nearest_sense_accuracy(tv, train, sv, test)
    assert acc == pytest.approx(50.0) and per_word == {"v": 0.0, "w": pytest.approx(66.67)}


def _probe(task, data_dir, tmp_path, bilm_files, *extra):
    o, w = bilm_files
    out = tmp_path / task
    out.mkdir()
    cfg = _cfg(
        [
            f"task={task}",
            f"data.dir={data_dir}",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            *extra,
        ]
    )
    runner.train(as_run(cfg), out)
    return json.loads((out / "results.json").read_text())


def test_pos_probe_end_to_end(tmp_path, bilm_files):
    r = _probe(
        "probe_pos",
        SAMPLES["probe_pos"],
        tmp_path,
        bilm_files,
        "data.train_file=pos_tiny.txt",
        "data.dev_file=pos_tiny.txt",
        "trainer.max_epochs=30",
        "trainer.min_updates=0",
        "trainer.patience=30",
        "trainer.lr=0.05",
        "trainer.batch_size=4",
    )
    acc = r["dev"]["accuracy_per_layer"]
    assert set(acc) == {"0", "1", "2", "mix"} and all(0 <= v <= 100 for v in acc.values())
    assert acc["0"] > 50  # the token layer alone separates this tiny tag set on its training data
    assert acc["mix"] == r["dev"]["accuracy"] and r["metric"] == "accuracy" and r["bilm"]["sha256"]
    assert abs(sum(r["mixing_weights"]["probe"]["s"]) - 1) < 1e-5  # the mix's softmax weights
    assert r["best_epoch"] >= 1 and len(r["epochs"]) == 30  # trained by the one trainer
    # every layer's accuracy is re-scored from the kept predictions: an edited one is refused
    from experiments.record import Record
    from experiments.rescoring import rescore, rescoring_differences

    path = tmp_path / "probe_pos" / "results.json"
    assert r["predictions"]["dev"] and rescoring_differences(Record.read(path)) == {}
    found = rescore(Record.read(path))  # the sentences' counts add up to the mix's accuracy (the bootstrap's units)
    assert len(found.units) == 12 and abs(found.metric_of_sums(found.counts.sum(0)) - acc["mix"]) < 1e-9
    r["dev"]["accuracy_per_layer"]["0"] -= 1
    path.write_text(json.dumps(r))
    assert list(rescoring_differences(Record.read(path))) == ["dev.accuracy_per_layer (re-scored from its predictions)"]


def test_the_pos_probe_heads_train_as_if_alone():
    """The summed loss of independent heads gives each head the gradient it would get alone."""
    from tasks.common.layers import ElmoFeatures
    from tasks.probe_pos.model import LayerProbe

    torch.manual_seed(0)
    features = ElmoFeatures("probe", 3, 8, mix="all", layer_norm=False, dropout=0.0, l2=0.0)
    model = LayerProbe(["A", "B", "C"], features)
    batch = {
        "layers": torch.randn(3, 2, 5, 8),
        "layer_mask": torch.ones(2, 5, dtype=torch.bool),
        "mask": torch.ones(2, 5, dtype=torch.bool),
        "tags": torch.randint(0, 3, (2, 5)),
    }
    model(batch).loss.backward()
    together = model.heads[1].weight.grad.clone()
    model.zero_grad()
    scores = model.scores(batch)
    torch.nn.functional.cross_entropy(scores[1].reshape(-1, 3), batch["tags"].reshape(-1)).backward()
    assert torch.allclose(together, model.heads[1].weight.grad)
    model.eval()
    heads = model(batch).predictions[0]
    assert set(heads) == {"0", "1", "2", "mix"} and all(len(v) == 5 for v in heads.values())


def test_wsd_probe_end_to_end(tmp_path, bilm_files):
    r = _probe("probe_wsd", SAMPLES["probe_wsd"], tmp_path, bilm_files, "data.words=[wsd_tiny_hard,wsd_tiny_line]")
    assert set(r["dev"]["accuracy_per_layer"]) == {"0", "1", "2", "average", "most_frequent_sense"}
    assert set(r["dev"]["accuracy_per_word"]["1"]) == {"hard-a", "line-n"}
    assert r["data_stats"] == {"train_instances": 16, "test_instances": 4, "senses": 4}
