"""The Hydra task runner: config composition, the activation cache, skip-if-done, determinism."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir

from suite_common.errors import ConfigError
from tasks import runner
from tasks.run_settings import effective_position
from encoders.activation_cache import ActivationCache
from encoders import BiLMEncoder
from tasks.layers import ElmoFeatures

from conftest import FIXTURES, REPO

CONF = str(REPO / "conf")


def _cfg(overrides=()):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=False)


@pytest.mark.parametrize("task", ["ner", "sst", "srl", "qa", "nli", "coref"])
@pytest.mark.parametrize("profile", ["quick", "paper"])
@pytest.mark.parametrize("position", ["none", "input", "output", "both"])
@pytest.mark.parametrize("mix", ["all", "last", "average"])
def test_config_composes(task, profile, position, mix):
    cfg = _cfg([f"task={task}", f"profile={profile}", f"elmo.position={position}", f"elmo.mix={mix}"])
    assert cfg.task.name == task and cfg.elmo.position == position and cfg.elmo.mix == mix
    assert cfg.data.train_file and cfg.trainer.lr > 0
    features = ElmoFeatures(cfg.elmo.position, 3, 16, cfg.elmo.mix, cfg.elmo.dropout)
    assert features.input_dim == (16 if position in ("input", "both") else 0)
    assert features.output_dim == (16 if position in ("output", "both") else 0)


@pytest.mark.parametrize("task", ["ner", "sst", "srl", "qa", "nli", "coref", "probe_pos", "probe_wsd"])
def test_source_local_points_every_task_at_its_shared_data(task):
    from conftest import SHARED
    local = _cfg([f"task={task}", "source=local"])
    assert local.data.dir.endswith(("conll2003", "sst", "srl_up_en", "squad", "nli_sick", "coref_litbank",
                                    "pos_ptb_sample", "wsd_senseval2"))
    if SHARED.exists():
        assert (Path(local.data.dir) / local.data.get("train_file", "hard.pos")).exists()
    assert _cfg([f"task={task}"]).data.get("dir") is None  # source=hf (default): the Hugging Face dataset


def test_profiles_set_the_papers_task_values():
    ner = _cfg(["task=ner", "profile=paper"])
    assert list(ner.task.model.hidden) == [200, 100] and ner.elmo.l2 == 0.1 and effective_position(ner) == "input"
    sst = _cfg(["task=sst", "profile=paper"])
    assert sst.trainer.lr == 0.0001 and effective_position(sst) == "both" and sst.task.phrases_min_tokens == 4
    # the command line still wins over the profile
    assert effective_position(_cfg(["task=ner", "profile=paper", "elmo.position=both"])) == "both"


@pytest.mark.parametrize("sweep", ["table1", "table2", "table3", "sample_efficiency"])
def test_sweep_configs_compose(sweep):
    from hydra import compose as hcompose
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = hcompose("config", overrides=[f"+sweep={sweep}"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    assert "seed" in params and "+ablation" in params
    for task in params["task"].split(","):
        for ablation in params["+ablation"].split(","):
            c = _cfg([f"task={task}", f"+ablation={ablation}"])
            assert effective_position(c) in ("none", "input", "output", "both")


def test_cache_reuse_and_corrupt_rebuild(bilm_files, tmp_path):
    sentences = [["a", "b", "c"], ["d"], ["the", "cat", "sat", "down", "."]]
    cache = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2))
    before = ActivationCache.encoder_passes
    first = cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 2
    layers, mask = first.batch([2, 1])
    assert layers.shape == (3, 2, 5, 16) and mask.sum().item() == 6
    again = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2)).get(sentences)
    assert ActivationCache.encoder_passes == before + 2  # second run: zero biLM passes
    np.testing.assert_array_equal(again.sentence(2), first.sentence(2))
    expected = first.sentence(0).copy()
    directory = again.directory
    del first, again
    with open(directory / "layers.npy", "r+b") as f:  # flip bytes inside the data
        f.seek(-16, 2)
        f.write(b"\xff" * 16)
    rebuilt = cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 4
    np.testing.assert_array_equal(rebuilt.sentence(0), expected)
    (directory / "layers.npy").write_bytes((directory / "layers.npy").read_bytes()[:100])  # truncate
    cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 6
    # a half-built entry (interrupted) is never visible under the final name
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [directory.name]


def _run_cfg(bilm_files, tmp_path, *overrides):
    o, w = bilm_files
    return _cfg(["task=ner", f"data.dir={FIXTURES}", "data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll",
                 f"elmo.options={o}", f"elmo.weights={w}", f"elmo.cache_dir={tmp_path / 'cache'}",
                 "trainer.max_epochs=2", "task.model.hidden=[8]", "task.model.char_filters=4", "task.model.word_dim=8",
                 "trainer.batch_size=8", *overrides])


def test_train_writes_results_and_skips_when_done(bilm_files, tmp_path, monkeypatch):
    cfg = _run_cfg(bilm_files, tmp_path, "elmo.position=both")
    out = tmp_path / "run"
    out.mkdir()
    results = runner.train(cfg, out)
    saved = json.loads((out / "results.json").read_text())
    assert saved["dev"]["f1"] == results["dev"]["f1"] and saved["task"] == "ner" and len(saved["epochs"]) >= 1
    assert set(saved["mixing_weights"]) == {"input", "output"}
    assert abs(sum(saved["mixing_weights"]["input"]["s"]) - 1) < 1e-4
    assert saved["bilm"]["sha256"] and saved["config"]["elmo"]["position"] == "both"
    monkeypatch.setattr(runner, "fit", lambda *a, **k: pytest.fail("a finished configuration was trained again"))
    assert runner.train(cfg, out)["dev"] == saved["dev"]
    with pytest.raises(pytest.fail.Exception):  # another configuration in the same directory runs again
        runner.train(_run_cfg(bilm_files, tmp_path, "elmo.position=input"), out)


def test_paper_position_reuses_the_run_with_the_position_spelled_out(bilm_files, tmp_path, monkeypatch):
    root = tmp_path / "runs"
    first, second = root / "ner" / "input", root / "ner" / "paper"
    first.mkdir(parents=True)
    second.mkdir()
    done = runner.train(_run_cfg(bilm_files, tmp_path, "elmo.position=input", f"runs_root={root}"), first)
    record = json.loads((first / "results.json").read_text())
    (first / "results.json").write_text(json.dumps({**record, "config_hash": "written-by-an-older-version"}))
    monkeypatch.setattr(runner, "fit", lambda *a, **k: pytest.fail("a finished configuration was trained again"))
    again = runner.train(_run_cfg(bilm_files, tmp_path, "elmo.position=paper", f"runs_root={root}"), second)
    assert again["reused_from"] == str(first) and again["dev"] == done["dev"]  # NER's paper position is 'input'
    assert json.loads((second / "results.json").read_text())["dev"] == done["dev"]


def test_same_seed_same_result_and_cached_equals_live(bilm_files, tmp_path):
    results = []
    for i, cache in enumerate(["true", "true", "false"]):
        out = tmp_path / f"run{i}"
        out.mkdir()
        results.append(runner.train(_run_cfg(bilm_files, tmp_path, "elmo.position=input", f"elmo.cache={cache}"), out))
    assert results[0]["dev"] == results[1]["dev"] and results[0]["mixing_weights"] == results[1]["mixing_weights"]
    assert results[0]["epochs"][0]["train_loss"] == pytest.approx(results[2]["epochs"][0]["train_loss"], abs=1e-4)


def test_regularizer_pulls_mix_towards_uniform(bilm_files, tmp_path):
    spread = {}
    for lam in ("0", "100"):
        out = tmp_path / f"l{lam}"
        out.mkdir()
        r = runner.train(_run_cfg(bilm_files, tmp_path, "elmo.position=input", f"elmo.l2={lam}",
                                  "trainer.lr=0.05", "elmo.dropout=0"), out)
        s = r["mixing_weights"]["input"]["s"]
        spread[lam] = max(s) - min(s)
    assert spread["100"] < 0.5 * spread["0"]  # Adam steps ~lr, so "near" uniform, not exactly


def test_regularizer_is_added_per_mix():
    values = {}
    for lam in (0.1, 0.0):
        features = ElmoFeatures("both", 3, 4, l2=lam)
        with torch.no_grad():
            features.elmo.mixes[0].scalar_parameters.copy_(torch.tensor([1.0, 0.0, -1.0]))
            features.elmo.mixes[1].scalar_parameters.copy_(torch.tensor([0.5, 0.5, 0.0]))
        values[lam] = features.regularizer().item()
    assert values[0.1] == pytest.approx(0.1 * (2 + 0.5))
    assert values[0.0] == 0.0


def test_evaluate_mode_scores_any_file(bilm_files, tmp_path):
    cfg = _run_cfg(bilm_files, tmp_path, "elmo.position=input")
    out = tmp_path / "run"
    out.mkdir()
    trained = runner.train(cfg, out)
    ev = _cfg(["mode=evaluate", f"checkpoint={out / 'best.pt'}", f"data.test_path={FIXTURES / 'ner_tiny.conll'}"])
    report = runner.evaluate(ev, out)
    assert report["metrics"]["f1"] == pytest.approx(trained["dev"]["f1"])
    assert report["data_format"] == next(iter(runner.make_task(cfg).readers))  # the reader used, never null


def test_sst_end_to_end_and_binary(bilm_files, tmp_path):
    o, w = bilm_files
    for binary in ("false", "true"):
        out = tmp_path / f"sst-{binary}"
        out.mkdir()
        cfg = _cfg(["task=sst", f"data.dir={FIXTURES}", "data.train_file=sst_tiny.txt", "data.dev_file=sst_tiny.txt",
                    f"elmo.options={o}", f"elmo.weights={w}", f"elmo.cache_dir={tmp_path / 'cache'}",
                    "elmo.position=output", f"task.binary={binary}", "trainer.max_epochs=3", "task.model.hidden=8",
                    "task.model.feedforward=8", "task.model.char_filters=4", "task.model.word_dim=8"])
        r = runner.train(cfg, out)
        assert 0 <= r["dev"]["accuracy"] <= 100 and set(r["mixing_weights"]) == {"output"}
        assert r["data_stats"]["train"]["neutral_dropped"] == (3 if binary == "true" else 0)


def test_srl_end_to_end_shares_biLM_rows(bilm_files, tmp_path):
    o, w = bilm_files
    out = tmp_path / "srl"
    out.mkdir()
    cfg = _cfg(["task=srl", f"data.dir={FIXTURES}", "data.train_file=srl_tiny.conllu", "data.dev_file=srl_tiny.conllu",
                f"elmo.options={o}", f"elmo.weights={w}", f"elmo.cache_dir={tmp_path / 'cache'}",
                "elmo.position=both", "trainer.max_epochs=2", "task.model.hidden=8", "task.model.layers=2",
                "task.model.word_dim=8", "task.model.predicate_dim=4"])
    r = runner.train(cfg, out)
    assert 0 <= r["dev"]["f1"] <= 100 and "per_role" in r["dev"]
    cached = list((tmp_path / "cache").iterdir())
    assert len(cached) == 1  # train and dev are the same file: one entry
    meta = __import__("json").loads((cached[0] / "meta.json").read_text())
    assert meta["sentences"] == 2  # 3 predicates in 2 annotated sentences with predicates: one biLM row each


def _qa_cfg(bilm_files, tmp_path, *overrides):
    o, w = bilm_files
    return _cfg(["task=qa", f"data.dir={FIXTURES}", "data.train_file=squad_tiny.json", "data.dev_file=squad_tiny.json",
                 f"elmo.options={o}", f"elmo.weights={w}", f"elmo.cache_dir={tmp_path / 'cache'}",
                 "task.model.hidden=6", "task.model.linear=8", "task.model.char_filters=4", "task.model.word_dim=8",
                 *overrides])


def test_qa_end_to_end(bilm_files, tmp_path):
    out = tmp_path / "qa"
    out.mkdir()
    cfg = _qa_cfg(bilm_files, tmp_path, "elmo.position=both", "trainer.max_epochs=2", "trainer.batch_size=2",
                  "data.fraction=1.0")  # the quick profile trains QA on 10 %
    r = runner.train(cfg, out)
    assert r["dev"]["questions"] == 4 and 0 <= r["dev"]["f1"] <= 100
    meta = json.loads(next((tmp_path / "cache").iterdir()).joinpath("meta.json").read_text())
    assert meta["sentences"] == 2 + 4  # each context once, each question once


def test_nli_end_to_end_deterministic(bilm_files, tmp_path):
    o, w = bilm_files
    results = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        cfg = _cfg(["task=nli", "data.format=sick", f"data.dir={FIXTURES}", "data.train_file=sick_tiny.tsv",
                    "data.dev_file=sick_tiny.tsv", f"elmo.options={o}", f"elmo.weights={w}",
                    f"elmo.cache_dir={tmp_path / 'cache'}", "elmo.position=both", "elmo.layer_norm=true",
                    "trainer.max_epochs=2", "task.model.hidden=6", "task.model.word_dim=8"])
        results.append(runner.train(cfg, out))
    assert results[0]["dev"] == results[1]["dev"] and results[0]["epochs"][0]["train_loss"] == results[1]["epochs"][0]["train_loss"]
    assert set(results[0]["dev"]["per_class_accuracy"]) == {"entailment", "neutral", "contradiction"}
    meta = json.loads(next((tmp_path / "cache").iterdir()).joinpath("meta.json").read_text())
    assert meta["sentences"] == 9  # 3 premises + 6 hypotheses, each read once


def test_trainer_options_adadelta_ema_halving_weight_decay(bilm_files, tmp_path):
    from tasks.trainer import TrainerConfig, make_optimizer
    cfg = _run_cfg(bilm_files, tmp_path, "trainer.optimizer=adadelta", "trainer.lr=1.0", "trainer.ema=0.9",
                   "trainer.lr_halving=true", "trainer.weight_decay=0.01", "elmo.position=input", "trainer.max_epochs=3")
    out = tmp_path / "opts"
    out.mkdir()
    r = runner.train(cfg, out)
    assert len(r["epochs"]) >= 1 and 0 <= r["dev"]["f1"] <= 100
    # ℓ2 goes to weight matrices only: not to ELMo's mixing weights, biases or embeddings
    from tasks.layers import ElmoFeatures
    task = runner.make_task(cfg)
    splits = task.load_splits(cfg.data)
    task.build_vocab(splits["train"])
    model = task.build_model(ElmoFeatures("input", 3, 16))
    opt = make_optimizer(model, TrainerConfig.from_config(cfg))
    assert isinstance(opt, torch.optim.Adadelta)
    decayed = {id(p) for g in opt.param_groups if g["weight_decay"] > 0 for p in g["params"]}
    names = {n for n, p in model.named_parameters() if id(p) in decayed}
    assert names == {"lstms.0.weight_ih_l0", "lstms.0.weight_hh_l0", "lstms.0.weight_ih_l0_reverse",
                     "lstms.0.weight_hh_l0_reverse", "output.weight"}


def test_state_policies_are_cached_separately_and_warmup_runs_first(bilm_files, tmp_path):
    sentences = [["a", "b", "c"], ["d", "e"], ["the", "cat", "sat"], ["x"], ["y", "z"], ["q", "r", "s"]]
    layers = {}
    for state in ("stateless", "stateful", "stateful_warmup"):
        cache = ActivationCache(tmp_path / "c", BiLMEncoder(*bilm_files, state=state, batch_size=2, warmup_batches=2))
        before = ActivationCache.encoder_passes
        layers[state] = cache.get(sentences)
        assert ActivationCache.encoder_passes - before == 3 + (2 if state == "stateful_warmup" else 0)
    assert len(list((tmp_path / "c").iterdir())) == 3  # one entry per policy
    first = {k: v.sentence(0) for k, v in layers.items()}
    last = {k: v.sentence(5) for k, v in layers.items()}
    np.testing.assert_allclose(first["stateless"], first["stateful"], atol=1e-6)  # both start from zero
    assert not np.allclose(last["stateless"][1:], last["stateful"][1:])  # carried states change later batches
    assert not np.allclose(first["stateful"][1:], first["stateful_warmup"][1:])  # warmed-up from the first batch
    # the token layer has no state (equal up to float rounding: the two paths batch the words differently)
    np.testing.assert_allclose(first["stateless"][0], first["stateful_warmup"][0], atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="elmo.state must be one of"):
        BiLMEncoder(*bilm_files, state="sometimes")


def test_finetuned_biLM_is_trained_once_and_reported(tmp_path):
    from elmo_core.pretrain import main as pretrain_main
    from conftest import shared_path
    corpus = shared_path("data/fixtures/bilm_tf_train/data.txt")
    pretrain_main(["--preset", "tiny", "--train", str(corpus), "--out", str(tmp_path / "base"), "--batch-size", "4",
                   "--unroll-steps", "5", "--min-count", "1", "--epochs", "1", "--no-progress"])
    base = tmp_path / "base"
    results = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        cfg = _cfg(["task=ner", f"data.dir={FIXTURES}", "data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll",
                    f"elmo.options={base / 'options.json'}", f"elmo.weights={base / 'weights.hdf5'}",
                    f"elmo.cache_dir={tmp_path / 'cache' / 'activations'}", "elmo.finetune=true", "elmo.position=input",
                    "trainer.max_epochs=1", "task.model.hidden=[4]", "task.model.char_filters=2", f"seed={len(results)}"])
        results.append(runner.train(cfg, out))
    ft = results[0]["bilm_finetune"]
    assert ft["dev_perplexity_after"] < ft["dev_perplexity_before"]  # adapted to the task text
    assert results[0]["bilm"]["sha256"] != __import__("elmo_core").file_sha256(base / "weights.hdf5")
    assert len(list((tmp_path / "cache" / "finetuned").iterdir())) == 1  # shared by both seeds
    assert results[1]["bilm_finetune"] == ft and results[1]["bilm"]["sha256"] == results[0]["bilm"]["sha256"]
    only = runner.finetune(cfg, tmp_path / "a")  # mode=finetune: the same cached biLM, reported on its own
    assert only["bilm_finetune"] == ft and only["bilm"]["sha256"] == __import__("elmo_core").file_sha256(base / "weights.hdf5")
    saved = json.loads((tmp_path / "a" / "finetune.json").read_text())
    assert saved["task"] == "ner" and saved["command"] and saved["hardware"]["cpus"] >= 1


@pytest.mark.parametrize("task", ["nli", "srl"])
def test_unknown_data_format_is_a_clear_error(task, bilm_files, tmp_path):
    o, w = bilm_files
    cfg = _cfg([f"task={task}", f"data.dir={FIXTURES}", "data.format=xml", f"elmo.options={o}", f"elmo.weights={w}"])
    with pytest.raises(ConfigError, match="data.format must be one of .* got 'xml'"):
        runner.train(cfg, tmp_path)


def test_qa_subsample_keeps_context_rows_dense(bilm_files, tmp_path):
    out = tmp_path / "qa"
    out.mkdir()
    r = runner.train(_qa_cfg(bilm_files, tmp_path, "elmo.position=input", "trainer.max_epochs=1", "data.fraction=0.5"), out)
    assert r["train_examples"] == 2 and r["dev"]["questions"] == 4


@pytest.mark.parametrize("task,fixture", [("srl", "srl_tiny.conllu"), ("nli", "sick_tiny.tsv"), ("ner", "ner_tiny.conll"),
                                          ("sst", "sst_tiny.txt")])  # QA: test_qa_subsample_keeps_context_rows_dense
def test_every_task_trains_on_a_fraction(task, fixture, bilm_files, tmp_path):
    o, w = bilm_files
    out = tmp_path / task
    out.mkdir()
    cfg = _cfg([f"task={task}", f"data.dir={FIXTURES}", f"data.train_file={fixture}", f"data.dev_file={fixture}",
                f"elmo.options={o}", f"elmo.weights={w}", f"elmo.cache_dir={tmp_path / 'cache'}", "elmo.position=input",
                "trainer.max_epochs=1", "task.model.word_dim=8", "data.fraction=0.5",
                *(["data.format=sick"] if task == "nli" else [])])
    full = len(runner.make_task(cfg).load_splits(cfg.data)["train"])
    r = runner.train(cfg, out)
    assert r["train_examples"] == -(-full // 2)  # ⌈n/2⌉ of a fixed permutation


def test_run_py_reports_library_errors_as_one_line(tmp_path):
    """A data or configuration error raised by library code reaches the user as one line
    (no traceback) with exit status 2."""
    import subprocess
    import sys
    for overrides, message in ((["task=ner", f"data.dir={tmp_path}"], f"error: {tmp_path / 'eng.train'}: no such file"),
                               (["task=nli", f"data.dir={FIXTURES}", "data.train_file=sick_tiny.tsv",
                                 "data.dev_file=sick_tiny.tsv", "data.format=xml"], "error: data.format must be one of")):
        done = subprocess.run([sys.executable, str(REPO / "run.py"), *overrides, f"runs_root={tmp_path / 'runs'}"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 2, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
        assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr


def test_equal_updates_for_small_fractions_and_record_identity():
    """Figure 1's rule: with trainer.equal_updates a fraction f trains round(1/f) passes per epoch;
    the key changes a run's identity only where it changes the training (f < 1)."""
    from tasks.run_records import run_digest
    from tasks.trainer import passes_per_epoch
    assert passes_per_epoch(_cfg(["data.fraction=0.01", "trainer.equal_updates=true"])) == 100
    assert passes_per_epoch(_cfg(["data.fraction=0.1", "trainer.equal_updates=true"])) == 10
    assert passes_per_epoch(_cfg(["data.fraction=0.1"])) == 1 and passes_per_epoch(_cfg([])) == 1
    from omegaconf import OmegaConf
    plain = OmegaConf.to_container(_cfg(["task=srl"]), resolve=True)
    older = json.loads(json.dumps(plain))
    del older["trainer"]["equal_updates"]  # a record written before the key existed
    full = OmegaConf.to_container(_cfg(["task=srl", "trainer.equal_updates=true"]), resolve=True)
    small = OmegaConf.to_container(_cfg(["task=srl", "trainer.equal_updates=true", "data.fraction=0.1"]), resolve=True)
    small_fixed = OmegaConf.to_container(_cfg(["task=srl", "data.fraction=0.1"]), resolve=True)
    same = {"bilm_sha256": "b", "data_sha256": {}, "task_version": 1}
    assert run_digest(plain, same) == run_digest(older, same) == run_digest(full, same)
    assert run_digest(small, same) != run_digest(small_fixed, same)
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        sweep = compose("config", overrides=["+sweep=sample_efficiency"])
    assert sweep.trainer.equal_updates is True


def test_printed_evaluate_line_pastes_as_it_is_and_keeps_the_training_format(bilm_files, tmp_path):
    """A SICK-trained ESIM (data.format=sick) scores a SICK file through the evaluate line the run
    printed, with the run directory pasted unquoted; each test file gets its own evaluation directory."""
    import shlex
    import subprocess
    import sys
    o, w = bilm_files
    runs = tmp_path / "runs"
    train = [sys.executable, str(REPO / "run.py"), "task=nli", "source=local", f"data.dir={FIXTURES}",
             "data.train_file=sick_tiny.tsv", "data.dev_file=sick_tiny.tsv", f"elmo.options={o}", f"elmo.weights={w}",
             f"elmo.cache_dir={tmp_path / 'cache'}", f"runs_root={runs}", "elmo.position=input", "trainer.max_epochs=1",
             "task.model.hidden=8", "task.model.word_dim=8", "task.model.char_filters=4", "seed=3"]
    done = subprocess.run(train, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("score a file with it: "))
    command = shlex.split(line.split(": ", 1)[1])  # exactly what a user pastes
    run_dir = Path(command[3].split("=", 1)[1])  # checkpoint=<run dir>
    assert command[:3] == ["python", "run.py", "mode=evaluate"] and command[-1] == "data.test_path=FILE"
    assert "=" not in run_dir.name and "," not in run_dir.name
    reports = []
    for name in ("sick_tiny.tsv", "copy.tsv"):
        test_file = FIXTURES / name if name != "copy.tsv" else tmp_path / name
        if name == "copy.tsv":
            test_file.write_text("\n".join((FIXTURES / "sick_tiny.tsv").read_text().splitlines()[:4]) + "\n")
        evaluate = [sys.executable, str(REPO / "run.py"), *command[2:-1], f"data.test_path={test_file}",
                    f"runs_root={runs}"]
        done = subprocess.run(evaluate, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        reports.append(next(run_dir.glob(f"evaluations/{name}@*/eval_results.json")))
    first = json.loads(reports[0].read_text())
    trained = json.loads((run_dir / "results.json").read_text())
    assert first["data_format"] == "sick" and first["metrics"]["accuracy"] == pytest.approx(trained["dev"]["accuracy"])
    assert reports[0].parent != reports[1].parent and reports[0].exists()  # the second did not overwrite the first
