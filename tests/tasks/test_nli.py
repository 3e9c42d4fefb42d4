"""NLI: readers, ESIM masking, per-class metrics."""

import json
from pathlib import Path

import pytest
import torch
from conftest import SAMPLES, shared_path

from experiments.run_config import as_run
from tasks.nli.reader import DataFormatError, read_sick_tsv, read_snli_jsonl


def test_snli_reader_on_shared_fixture():
    ds, stats = read_snli_jsonl(shared_path("data/fixtures/snli/snli.jsonl"))
    assert stats == {"pairs": 3, "no_gold_label_dropped": 0}
    assert ds[0]["premise"][:3] == ["A", "person", "on"] and ds[0]["label"] == 1  # neutral


def test_snli_reader_drops_and_counts_dash_labels(tmp_path):
    lines = [
        {"gold_label": "entailment", "sentence1": "A dog runs.", "sentence2": "An animal moves.", "pairID": "a"},
        {"gold_label": "-", "sentence1": "A dog runs.", "sentence2": "It is fast.", "pairID": "b"},
        {"gold_label": "contradiction", "sentence1": "A dog runs.", "sentence2": "A dog sleeps.", "pairID": "c"},
    ]
    (tmp_path / "s.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ds, stats = read_snli_jsonl(tmp_path / "s.jsonl")
    assert stats == {"pairs": 2, "no_gold_label_dropped": 1} and list(ds["pair_id"]) == ["a", "c"]


@pytest.mark.parametrize(
    "content,message",
    [
        (
            '{"gold_label": "neutral", "sentence1": "a", "sentence2": "b"}\n{"gold_label": "neutral", "sentence1": \n',
            r"s.jsonl:2: not valid JSON",
        ),
        ('{"gold_label": "neutral", "sentence1": "a"}\n', r"s.jsonl:1: missing field 'sentence2'"),
        ('{"gold_label": "maybe", "sentence1": "a", "sentence2": "b"}\n', r"s.jsonl:1: unknown label 'maybe'"),
    ],
)
def test_snli_reader_errors(tmp_path, content, message):
    (tmp_path / "s.jsonl").write_text(content)
    with pytest.raises(DataFormatError, match=message):
        read_snli_jsonl(tmp_path / "s.jsonl")


def test_sick_reader(tmp_path):
    ds, stats = read_sick_tsv(SAMPLES["nli"] / "sick_tiny.tsv")
    assert stats["pairs"] == 12 and ds[0]["hypothesis"] == ["A", "person", "plays", "an", "instrument", "."]
    assert list(ds["label"])[:3] == [0, 2, 1]
    (tmp_path / "x.tsv").write_text("pair_ID\tsentence_A\tsentence_B\tentailment_label\n1\ta b\tNEUTRAL\n")
    with pytest.raises(DataFormatError, match=r"x.tsv:2: expected 4 tab-separated fields, got 3"):
        read_sick_tsv(tmp_path / "x.tsv")
    (tmp_path / "y.tsv").write_text("id\ta\tb\n")
    with pytest.raises(DataFormatError, match=r"y.tsv:1: header must contain"):
        read_sick_tsv(tmp_path / "y.tsv")


def test_esim_padding_never_changes_the_prediction():
    from tasks.common.layers import ElmoFeatures
    from tasks.nli.task import NliTask

    cfg = as_run(
        {
            "task": {
                "name": "nli",
                "model": {
                    "word_dim": 8,
                    "vectors": None,
                    "min_word_count": 1,
                    "char_dim": 4,
                    "char_filters": 4,
                    "char_width": 3,
                    "hidden": 6,
                    "dropout": 0.0,
                },
            }
        }
    ).task
    task = NliTask(cfg)
    ds, _ = read_sick_tsv(SAMPLES["nli"] / "sick_tiny.tsv")
    ds = ds.add_column("premise_row", list(range(len(ds)))).add_column("hypothesis_row", list(range(len(ds))))
    task.build_vocab(ds)
    torch.manual_seed(0)
    features = ElmoFeatures("both", 3, 10, mix="all", layer_norm=False, dropout=0.0, l2=0.0)
    model = task.build_model(features).eval()
    layers = {"premise": torch.randn(3, 12, 12, 10), "hypothesis": torch.randn(3, 12, 12, 10)}

    def logits(indices):
        batch = task.batch(ds, indices)
        for side in ("premise", "hypothesis"):  # what Task.make_batch adds from a layer source
            batch[side]["layers"] = layers[side][:, indices, : batch[side]["mask"].shape[1]]
            batch[side]["layer_mask"] = batch[side]["mask"]
        return model(batch).scores

    with torch.no_grad():
        alone = logits([3])
        padded = logits([0, 3, 1])  # longer neighbours pad example 3
    assert logits([0, 3, 1]).shape == (3, 3)
    torch.testing.assert_close(alone[0], padded[1], atol=1e-5, rtol=0)


def test_nli_scores_confusion():
    from omegaconf import OmegaConf

    from tasks.nli.task import NliTask

    ds, _ = read_sick_tsv(SAMPLES["nli"] / "sick_tiny.tsv")
    gold = list(ds["label"])
    s = NliTask(OmegaConf.create({})).score(ds, [0] * len(gold))
    assert s["accuracy"] == pytest.approx(100 * gold.count(0) / len(gold))
    assert s["per_class_accuracy"] == {"entailment": 100.0, "neutral": 0.0, "contradiction": 0.0}
    assert sum(map(sum, s["confusion_matrix"]["rows_gold"])) == len(gold)


def _toy_sick(path, n_per_class=20):
    """A separable toy set in SICK's format: the hypothesis's last word decides the label."""
    import random

    rng = random.Random(0)
    subjects, verbs = ["a man", "the dog", "two kids", "a woman", "the cat"], ["runs", "sleeps", "eats", "plays"]
    lines = ["pair_ID\tsentence_A\tsentence_B\tentailment_label"]
    for k, (word, label) in enumerate(
        ("yes ENTAILMENT", "no CONTRADICTION", "perhaps NEUTRAL")[i].split()
        for i in range(3)
        for _ in range(n_per_class)
    ):
        premise = f"{rng.choice(subjects)} {rng.choice(verbs)} ."
        lines.append(f"{k}\t{premise}\t{premise[:-2]} {word} .\t{label}")
    path.write_text("\n".join(lines) + "\n")


def test_esim_with_elmo_at_its_input_learns_every_class_of_a_separable_toy_set(bilm_files, tmp_path):
    """With the quick profile's ELMo settings, ESIM with ELMo at its input does not collapse
    onto fewer classes. On SICK, ELMo dropout 0.5 made it never predict entailment; on this toy set
    it does the same (entailment 0 % recall at 0.5, every class learned at 0.0, 2026-11-23)."""
    from run_configs import compose_cfg as _cfg

    from experiments import runner

    _toy_sick(tmp_path / "toy.tsv")
    o, w = bilm_files
    cfg = _cfg(
        [
            "task=nli",
            "profile=quick",
            "source=local",
            "+ablation=input",
            "data.format=sick",
            f"data.dir={tmp_path}",
            "data.train_file=toy.tsv",
            "data.dev_file=toy.tsv",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'c'}",
            f"runs_root={tmp_path / 'runs'}",
            "task.model.hidden=16",
            "task.model.word_dim=8",
            "task.model.char_filters=4",
            "trainer.max_epochs=12",
            "trainer.min_updates=0",
            "trainer.patience=12",
            "trainer.batch_size=8",
            "trainer.lr=0.005",
            "task.model.embedding_init=normal",  # as measured on 2026-11-23: the toy's words told apart from the start
        ]
    )  # 60 pairs: a larger step than SICK's 4.5k need
    assert cfg.elmo.position == "input"
    record = runner.train(as_run(cfg), tmp_path / "runs" / "nli" / "toy")
    per_class = record["dev"]["per_class_accuracy"]
    assert min(per_class.values()) > 50, per_class  # every class learned, none at 0 % recall

    from reporting.elmo_input_norms import input_norms
    from reporting.elmo_input_norms import main as norms_main

    run_dir = Path(record["run_dir"])
    norms = input_norms(run_dir)  # the diagnosis reads the trained checkpoint
    assert norms["tokens"] == 60 * (4 + 5) and norms["word"] > 0 and norms["elmo"] > 0  # 60 pairs of 4 + 5 tokens
    norms_main([str(run_dir), "--out", str(tmp_path / "norms.md")])
    assert f"| 0 | {cfg.elmo.dropout} | {record['dev']['accuracy']:.2f} |" in (tmp_path / "norms.md").read_text()
