"""Training runs through the runner on tiny data: records and skip-if-done, determinism (cached equals
live), the λ‖w‖² regularizer, trainer options, data fractions and equal updates."""

import json

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from run_configs import CONF, compose_cfg, stopping_in_epoch_two, tiny_ner_cfg
from task_setups import TASKS

from experiments import runner
from experiments.run_config import as_run
from tasks.common.layers import ElmoFeatures


def test_train_writes_results_and_skips_when_done(bilm_files, tmp_path, monkeypatch):
    cfg = tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=both")
    out = tmp_path / "run"
    out.mkdir()
    results = runner.train(as_run(cfg), out)
    saved = json.loads((out / "results.json").read_text())
    assert saved["dev"]["f1"] == results["dev"]["f1"] and saved["task"] == "ner" and len(saved["epochs"]) >= 1
    assert set(saved["mixing_weights"]) == {"input", "output"}
    assert abs(sum(saved["mixing_weights"]["input"]["s"]) - 1) < 1e-4
    assert saved["bilm"]["sha256"] and saved["config"]["elmo"]["position"] == "both"
    monkeypatch.setattr(runner, "fit", lambda *a, **k: pytest.fail("a finished configuration was trained again"))
    assert runner.train(as_run(cfg), out)["dev"] == saved["dev"]
    with pytest.raises(pytest.fail.Exception):  # another configuration in the same directory runs again
        runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input")), out)


def test_paper_position_reuses_the_run_with_the_position_spelled_out(bilm_files, tmp_path, monkeypatch, capsys):
    """One configuration, one directory: the same run launched under another name is reused where it is,
    and nothing is written under the new name."""
    root = tmp_path / "runs"
    first, second = root / "ner" / "input", root / "ner" / "paper"
    first.mkdir(parents=True)
    done = runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input", f"runs_root={root}")), first)
    record = json.loads((first / "results.json").read_text())
    (first / "results.json").write_text(json.dumps({**record, "config_hash": "written-by-an-older-version"}))
    monkeypatch.setattr(runner, "fit", lambda *a, **k: pytest.fail("a finished configuration was trained again"))
    capsys.readouterr()
    second.mkdir()  # as Hydra makes it for the launch: left empty by a run found finished elsewhere, removed
    again = runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=paper", f"runs_root={root}")), second)
    assert again["run_dir"] == str(first) and again["dev"] == done["dev"]  # NER's paper position is 'input'
    assert not second.exists() and sorted(p.name for p in (root / "ner").iterdir()) == ["input"]
    out = capsys.readouterr().out
    assert f"skipping: this configuration already has its result in {first}" in out
    assert f"->  {first / 'results.json'}" in out


def test_same_seed_same_result_and_cached_equals_live(bilm_files, tmp_path):
    results = []
    for i, cache in enumerate(["true", "true", "false"]):
        out = tmp_path / f"run{i}"
        out.mkdir()
        results.append(
            runner.train(
                as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input", f"cache.enabled={cache}")), out
            )
        )
    assert results[0]["dev"] == results[1]["dev"] and results[0]["mixing_weights"] == results[1]["mixing_weights"]
    assert results[0]["epochs"][0]["train_loss"] == pytest.approx(results[2]["epochs"][0]["train_loss"], abs=1e-4)


def test_regularizer_pulls_mix_towards_uniform(bilm_files, tmp_path):
    spread = {}
    for lam in ("0", "100"):
        out = tmp_path / f"l{lam}"
        out.mkdir()
        r = runner.train(
            as_run(
                tiny_ner_cfg(
                    bilm_files,
                    tmp_path,
                    "elmo.position=input",
                    f"elmo.l2={lam}",
                    "trainer.lr=0.05",
                    "elmo.dropout=0",
                    "task.model.embedding_init=normal",  # large word vectors: the mix must move far for λ to pull on
                )
            ),
            out,
        )
        s = r["mixing_weights"]["input"]["s"]
        spread[lam] = max(s) - min(s)
    assert spread["100"] < 0.5 * spread["0"]  # Adam steps ~lr, so "near" uniform, not exactly


def test_regularizer_is_added_per_mix():
    values = {}
    for lam in (0.1, 0.0):
        features = ElmoFeatures("both", 3, 4, mix="all", layer_norm=False, dropout=0.5, l2=lam)
        with torch.no_grad():
            features.elmo.mixes[0].scalar_parameters.copy_(torch.tensor([1.0, 0.0, -1.0]))
            features.elmo.mixes[1].scalar_parameters.copy_(torch.tensor([0.5, 0.5, 0.0]))
        values[lam] = features.regularizer().item()
    assert values[0.1] == pytest.approx(0.1 * (2 + 0.5))
    assert values[0.0] == 0.0


def test_trainer_options_adadelta_ema_halving_weight_decay(bilm_files, tmp_path):
    from experiments.trainer import make_optimizer

    cfg = tiny_ner_cfg(
        bilm_files,
        tmp_path,
        "trainer.optimizer=adadelta",
        "trainer.lr=1.0",
        "trainer.ema=0.9",
        "trainer.lr_halving=true",
        "trainer.weight_decay=0.01",
        "elmo.position=input",
        "trainer.max_epochs=3",
        "trainer.min_updates=0",
    )
    out = tmp_path / "opts"
    out.mkdir()
    r = runner.train(as_run(cfg), out)
    assert len(r["epochs"]) >= 1 and 0 <= r["dev"]["f1"] <= 100
    # ℓ2 goes to weight matrices only: not to ELMo's mixing weights, biases or embeddings
    from tasks.common.layers import ElmoFeatures

    task = runner.make_task(as_run(cfg))
    splits = task.load_splits(as_run(cfg).data)
    task.build_vocab(splits["train"])
    model = task.build_model(ElmoFeatures("input", 3, 16, mix="all", layer_norm=False, dropout=0.5, l2=0.0))
    opt = make_optimizer(model, as_run(cfg).trainer)
    assert isinstance(opt, torch.optim.Adadelta)
    decayed = {id(p) for g in opt.param_groups if g["weight_decay"] > 0 for p in g["params"]}
    names = {n for n, p in model.named_parameters() if id(p) in decayed}
    assert names == {
        "lstms.0.weight_ih_l0",
        "lstms.0.weight_hh_l0",
        "lstms.0.weight_ih_l0_reverse",
        "lstms.0.weight_hh_l0_reverse",
        "output.weight",
    }


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_trains_on_a_fraction(task, bilm_files, tmp_path):
    o, w = bilm_files
    out = tmp_path / task
    out.mkdir()
    cfg = compose_cfg(
        [
            f"task={task}",
            *TASKS[task],
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "elmo.position=input",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
            "data.fraction=0.5",
        ]
    )
    full = len(runner.make_task(as_run(cfg)).load_splits(as_run(cfg).data)["train"])
    r = runner.train(as_run(cfg), out)
    assert r["train_examples"] == -(-full // 2)  # ⌈n/2⌉ of a fixed permutation


def test_equal_updates_for_small_fractions_and_record_identity():
    """Figure 1's rule: with trainer.equal_updates a fraction f trains round(1/f) passes per epoch;
    the key changes a run's identity only where it changes the training (f < 1)."""
    from experiments.plan import run_digest
    from experiments.trainer import passes_per_epoch

    assert passes_per_epoch(compose_cfg(["data.fraction=0.01", "trainer.equal_updates=true"])) == 100
    assert passes_per_epoch(compose_cfg(["data.fraction=0.1", "trainer.equal_updates=true"])) == 10
    assert passes_per_epoch(compose_cfg(["data.fraction=0.1"])) == 1 and passes_per_epoch(compose_cfg([])) == 1
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(compose_cfg(["task=srl"]), resolve=True)
    older = json.loads(json.dumps(plain))
    del older["trainer"]["equal_updates"]  # a record written before the key existed
    full = OmegaConf.to_container(compose_cfg(["task=srl", "trainer.equal_updates=true"]), resolve=True)
    small = OmegaConf.to_container(
        compose_cfg(["task=srl", "trainer.equal_updates=true", "data.fraction=0.1"]), resolve=True
    )
    small_fixed = OmegaConf.to_container(compose_cfg(["task=srl", "data.fraction=0.1"]), resolve=True)
    same = {"bilm_sha256": "b", "data_sha256": {}, "task_version": 1}
    assert run_digest(plain, same) == run_digest(older, same) == run_digest(full, same)
    assert run_digest(small, same) != run_digest(small_fixed, same)
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        sweep = compose("config", overrides=["+sweep=sample_efficiency"])
    assert sweep.trainer.equal_updates is True


@pytest.mark.parametrize(
    "options",
    [
        (),
        (
            "trainer.optimizer=adadelta",
            "trainer.lr=1.0",
            "trainer.ema=0.9",
            "trainer.lr_halving=true",
            "trainer.weight_decay=0.01",
        ),
        ("task.model.vectors={vectors}", "task.model.freeze_vectors=true"),
    ],
)
def test_a_stopped_run_resumes_after_its_last_epoch_with_the_same_numbers(options, bilm_files, tmp_path, monkeypatch):
    """A run stopped during its second epoch leaves its state after the first; launched again, it
    continues from there and ends with exactly the numbers of a run that never stopped (same seed,
    same threads), and says that it resumed. With the paper profiles' options too (Adadelta, a
    weight average, learning-rate halving, weight decay), and with frozen pretrained vectors (left out
    of the state, checked by digest)."""
    from experiments import trainer
    from static_vectors.store import write_hdf5

    vectors = tmp_path / "vectors_8d.hdf5"
    write_hdf5(vectors, ["EU", "German", "the"], np.arange(24, dtype=np.float32).reshape(3, 8) / 24)
    options = tuple(o.format(vectors=vectors) for o in options)

    overrides = (
        "elmo.position=input",
        "trainer.max_epochs=3",
        "trainer.min_updates=0",
        "trainer.patience=3",
        "task.model.dropout=0.3",
        *options,
    )
    whole_dir, stopped_dir = tmp_path / "whole" / "ner" / "run", tmp_path / "stopped" / "ner" / "run"
    whole_dir.mkdir(parents=True)
    stopped_dir.mkdir(parents=True)
    whole = runner.train(
        as_run(tiny_ner_cfg(bilm_files, tmp_path, *overrides, f"runs_root={tmp_path / 'whole'}")), whole_dir
    )
    assert not (whole_dir / "train_state.pt").exists() and "resumed_from_epoch" not in whole

    real_predict = trainer.predict  # stopped as a killed process: nothing after epoch 1 is saved
    cfg = tiny_ner_cfg(bilm_files, tmp_path, *overrides, f"runs_root={tmp_path / 'stopped'}")
    monkeypatch.setattr(trainer, "predict", stopping_in_epoch_two(real_predict))
    with pytest.raises(KeyboardInterrupt):
        runner.train(as_run(cfg), stopped_dir)
    assert (stopped_dir / "train_state.pt").exists() and not (stopped_dir / "results.json").exists()
    frozen = torch.load(stopped_dir / "train_state.pt", weights_only=True)["frozen"]["names"]
    assert frozen == (["embedder.word.weight"] if "task.model.freeze_vectors=true" in options else [])
    monkeypatch.setattr(trainer, "predict", real_predict)
    resumed = runner.train(as_run(cfg), stopped_dir)
    assert resumed["resumed_from_epoch"] == 1 and not (stopped_dir / "train_state.pt").exists()
    assert resumed["dev"] == whole["dev"] and resumed["best_epoch"] == whole["best_epoch"]
    assert [e["train_loss"] for e in resumed["epochs"]] == [e["train_loss"] for e in whole["epochs"]]
    assert resumed["mixing_weights"] == whole["mixing_weights"] and resumed["config_hash"] == whole["config_hash"]


def test_a_training_state_that_is_not_one_is_a_clear_error(bilm_files, tmp_path):
    from suite_common.errors import WeightsError

    out = tmp_path / "runs_root" / "ner" / "run"
    out.mkdir(parents=True)
    (out / "train_state.pt").write_bytes(b"not a torch file")
    with pytest.raises(WeightsError, match="train_state.pt: not a training state"):
        runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, "elmo.position=input")), out)


def test_a_stopped_run_of_another_configuration_is_never_resumed(bilm_files, tmp_path, monkeypatch):
    """Two configurations launched into one directory (another ELMo position here, as when the data
    files change under the same overrides): the second never continues the first one's state."""
    from experiments import trainer
    from suite_common.errors import WeightsError

    out = tmp_path / "runs_root" / "ner" / "run"
    out.mkdir(parents=True)
    real = trainer.predict
    monkeypatch.setattr(trainer, "predict", stopping_in_epoch_two(real))
    with pytest.raises(KeyboardInterrupt):
        runner.train(
            as_run(
                tiny_ner_cfg(
                    bilm_files, tmp_path, "elmo.position=input", "trainer.max_epochs=2", "trainer.min_updates=0"
                )
            ),
            out,
        )
    saved = (out / "train_state.pt").read_bytes()
    config = (out / "resolved_config.yaml").read_bytes()
    monkeypatch.setattr(trainer, "predict", real)
    with pytest.raises(WeightsError, match="train_state.pt: the training state of another run"):
        runner.train(
            as_run(
                tiny_ner_cfg(
                    bilm_files, tmp_path, "elmo.position=both", "trainer.max_epochs=2", "trainer.min_updates=0"
                )
            ),
            out,
        )
    assert (out / "train_state.pt").read_bytes() == saved  # nothing of the stopped run is lost
    assert (out / "resolved_config.yaml").read_bytes() == config  # nor its configuration


def test_a_skipped_run_names_where_its_record_is_now(bilm_files, tmp_path, capsys):
    """After the runs root is moved, the 'skipping' and 'score a file' lines named the
    old location."""
    import shutil

    old, new = tmp_path / "old", tmp_path / "new"
    cfg = tiny_ner_cfg(
        bilm_files, tmp_path, "elmo.position=input", "trainer.max_epochs=1", "trainer.min_updates=0", f"runs_root={old}"
    )
    runner.train(as_run(cfg), old / "ner" / "a")
    shutil.move(old, new)
    capsys.readouterr()
    again = tiny_ner_cfg(
        bilm_files, tmp_path, "elmo.position=input", "trainer.max_epochs=1", "trainer.min_updates=0", f"runs_root={new}"
    )
    runner.train(as_run(again), new / "ner" / "b")
    printed = capsys.readouterr().out
    assert f"skipping: this configuration already has its result in {new / 'ner' / 'a'}\n" in printed
    assert not (new / "ner" / "b").exists()  # nothing written under the second name
    assert f"checkpoint={new / 'ner' / 'a'} " in printed and str(old) not in printed


def test_min_updates_raises_the_epochs_of_a_small_data_set_only():
    """``trainer.min_updates`` (the quick profile's rule): epochs are raised where max_epochs epochs make fewer
    updates, never lowered; the quick profile sets it, the paper profile leaves it at 0."""
    from experiments.trainer import epochs_for
    from tasks.common.config import TrainerConfig

    quick = TrainerConfig(max_epochs=3, min_updates=500)
    assert epochs_for(quick, 439) == 3  # CoNLL-2003: 1,317 updates in 3 epochs
    assert epochs_for(quick, 107) == 5  # WNUT-17: 321 in 3 epochs, 535 in 5
    assert epochs_for(TrainerConfig(max_epochs=4, min_updates=500), 38) == 14  # quick SQuAD's 10 %
    assert epochs_for(TrainerConfig(max_epochs=3), 1) == 3
    assert compose_cfg(["task=ner", "source=local"]).trainer.min_updates == 500
    assert compose_cfg(["task=ner", "source=local", "profile=paper"]).trainer.min_updates == 0


def test_lr_halving_waits_for_as_many_updates_as_the_papers_data_set_gives_an_epoch():
    """``trainer.lr_halving_updates``: the learning rate halves after that many updates without a better dev
    score, counted in whole epochs; 0 (the default) halves after the first such epoch, as A.3 says of SNLI.
    The paper profile's SICK waits one SNLI epoch (17,193 updates), which it does not reach in 50 epochs."""
    from experiments.trainer import _schedule_and_average, halving_patience
    from tasks.common.config import TrainerConfig

    snli = TrainerConfig(lr_halving=True, lr_halving_updates=17193)
    assert halving_patience(snli, 17193) == 0  # SNLI itself: every epoch without a better score
    assert halving_patience(snli, 17192) == 1
    assert halving_patience(snli, 139) == 123  # SICK's 4,439 pairs at 32 a batch
    assert halving_patience(TrainerConfig(lr_halving=True), 139) == 0

    def lrs(t, per_epoch, scores):
        weight = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.Adam([weight], lr=0.0004)
        halve, _ = _schedule_and_average(torch.nn.Linear(1, 1), optimizer, t, per_epoch)
        seen = []
        for score in scores:
            halve.step(score)
            seen.append(optimizer.param_groups[0]["lr"])
        return seen

    flat = [62.0, 61.0, 61.0, 61.0]
    assert lrs(TrainerConfig(lr_halving=True), 100, flat) == [0.0004, 0.0002, 0.0001, 0.00005]
    waits = TrainerConfig(lr_halving=True, lr_halving_updates=300)  # three epochs of 100 updates
    assert lrs(waits, 100, flat) == [0.0004, 0.0004, 0.0004, 0.0002]
    assert lrs(waits, 100, [62.0, 61.0, 63.0, 61.0, 61.0]) == [0.0004] * 5  # a better score starts the count again
    assert compose_cfg(["task=nli", "source=local", "profile=paper"]).trainer.lr_halving_updates == 17193
    assert compose_cfg(["task=nli", "source=local"]).trainer.lr_halving_updates == 0
