"""The paper profile at scale (Peters et al. 2018 appendix A): every task's ``profile=paper`` trains
end to end (biLM run live, ``cache.enabled=false``, and scored on a test file), and a cache that would
not fit stops the run before it writes anything."""

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, SAMPLES
from hydra import compose, initialize_config_dir
from task_setups import TASKS, tiny_data

from encoders import BiLMEncoder
from encoders.activation_cache import ActivationCache, CacheBudgetError
from experiments import runner
from experiments.config_store import task_file
from experiments.run_config import as_run
from tasks.registry import task_class

PAPER_TASKS = [name for name in TASKS if "paper" in task_file(name).profiles]  # on their samples, at paper sizes


def _cfg(overrides):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=False)


@pytest.mark.parametrize("task", sorted(PAPER_TASKS))
def test_every_task_trains_at_the_paper_profile_with_the_biLM_run_live(task, bilm_files, tmp_path):
    """The paper's head sizes, optimizers and ELMo settings, one epoch on a fixture (a few updates),
    the biLM run on each batch; the fixture doubles as a test file, scored once with the best model. Where
    the paper profile fine-tunes the biLM on the task's text first (SQuAD, SNLI/SICK), it does so here."""
    from tiny_models import finetunable_bilm

    finetunes = bool(_cfg([f"task={task}", "profile=paper"]).encoder.finetune)
    o, w = finetunable_bilm(tmp_path / "bilm") if finetunes else bilm_files
    data = tiny_data(task, sizes=False)  # the sample's files, its dev file doubling as the test file
    test_file = next(o for o in data if o.startswith("data.dev_file=")).replace("dev_file", "test_file", 1)
    cfg = _cfg(
        [
            f"task={task}",
            "profile=paper",
            "source=local",
            *data,
            test_file,
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={tmp_path / 'cache'}",
            "cache.enabled=false",
            "elmo.position=paper",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
        ]
    )
    out = tmp_path / "run"
    out.mkdir()
    r = runner.train(as_run(cfg), out)
    assert r["config"]["trainer"]["max_epochs"] == 1 and r["elmo_position"] == cfg.task.elmo_position
    metric = task_class(task).metric
    assert r["dev"][metric] >= 0 and r["test"][metric] >= 0
    assert not (tmp_path / "cache").exists()  # nothing cached: the biLM ran per batch
    assert (tmp_path / "finetuned").is_dir() == finetunes  # the fine-tuned biLM, beside the cache directory
    assert bool(r["bilm_finetune"]) == finetunes
    assert r["mixing_weights"]  # ELMo was in the model


def test_planned_cache_size_is_the_size_written(bilm_files, tmp_path):
    o, w = bilm_files
    sentences = [["A", "short", "one"], ["Another", "sentence", "of", "five", "words"], ["x"]]
    for dtype in ("float32", "float16"):
        cache = ActivationCache(tmp_path / dtype, BiLMEncoder(o, w), dtype=dtype)
        planned = cache.planned_bytes(sentences)
        entry = cache.get(sentences, "t")
        written = sum((entry.directory / f).stat().st_size for f in ("layers.npy", "offsets.npy"))
        assert planned == written and cache.has(sentences)
        assert entry.layers.dtype == np.dtype(dtype)
    half, full = (
        ActivationCache(tmp_path / "x", BiLMEncoder(o, w), dtype=d).planned_bytes(sentences)
        for d in ("float16", "float32")
    )
    assert full - half == 9 * 3 * 16 * 2  # 9 tokens x 3 layers x 16 values x 2 bytes saved


def test_over_budget_is_refused_in_the_library_before_any_entry(bilm_files, tmp_path):
    o, w = bilm_files
    cache = ActivationCache(tmp_path / "cache", BiLMEncoder(o, w))
    sentences = {"t/train": [["a", "b"]] * 50, "t/dev": [["c"]] * 5}
    with pytest.raises(CacheBudgetError, match=r"cache.max_gb=1e-06.*cache.enabled=false"):
        cache.check_budget(sentences, 1e-6)
    assert not (tmp_path / "cache").exists()
    assert cache.check_budget(sentences, None) == sum(cache.planned_bytes(s) for s in sentences.values())
    cache.get(sentences["t/train"], "t/train")
    assert cache.check_budget(sentences, None) == cache.planned_bytes(sentences["t/dev"])  # built entries are free


def test_a_run_whose_cache_would_exceed_the_limit_stops_with_one_line_and_writes_nothing(bilm_files, tmp_path):
    o, w = bilm_files
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "task=ner",
            "source=local",
            f"data.dir={SAMPLES['ner']}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            f"encoder.options={o}",
            f"encoder.weights={w}",
            f"cache.dir={cache}",
            "cache.max_gb=0.000001",
            f"runs_root={runs}",
            "threads=1",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert (
        "would take 35 kB (180 tokens x 3 layers x 16 x 4 bytes)" in lines[0]
        and "cache.max_gb=1e-06" in lines[0]
        and "cache.enabled=false" in lines[0]
    )
    assert not cache.exists() and not runs.exists()


def test_cache_max_gb_does_not_change_a_runs_identity():
    from experiments.plan import run_digest

    a, b = (json.loads(json.dumps(dict(elmo={"l2": 0.1}, cache={"max_gb": v}, task={"name": "ner"}))) for v in (100, 5))
    c = {"elmo": {"l2": 0.1}, "task": {"name": "ner"}}  # records written before the key existed
    assert run_digest(a, {}) == run_digest(b, {}) == run_digest(c, {})
