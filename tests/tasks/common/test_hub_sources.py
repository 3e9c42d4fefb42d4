"""The default source (``source=hf``) offline: each task's hub copy is rebuilt locally in the hub's
schema (column names, nested fields, ClassLabel names) by its ``hub_sample.py``, laid out as the
configured Parquet export (``<data_dir>/<split>/0000.parquet``), loaded through the same
``load_dataset`` call, and trained on. Without network, the default command fails within seconds
with one line naming ``source=local``."""

import importlib
import subprocess
import sys
import time

import pytest
from conftest import REPO
from hydra import compose, initialize_config_dir
from task_setups import TRAINABLE, tiny_sizes

from experiments import runner
from experiments.config_store import task_file
from experiments.run_config import as_run
from tasks.registry import ROOT

HUB_SAMPLES = [name for name in TRAINABLE if (ROOT / name / "hub_sample.py").is_file()]


@pytest.mark.every_task
def test_every_task_read_from_the_hub_has_its_sample_in_the_hub_schema():
    on_the_hub = [name for name in TRAINABLE if task_file(name).data.get("hf_name")]
    assert on_the_hub and sorted(on_the_hub) == sorted(HUB_SAMPLES)


@pytest.mark.every_task
@pytest.mark.parametrize("task", HUB_SAMPLES)
def test_the_hub_copy_loads_and_trains_offline(task, bilm_files, tmp_path):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        default = compose("config", overrides=[f"task={task}"])
    assert default.data.get("dir") is None  # source=hf is the default
    local = tmp_path / "hub_copy"
    folder = local / default.data.hf_data_dir if default.data.get("hf_data_dir") else local / "data"
    module = importlib.import_module(f"tasks.{task}.hub_sample")
    sample = task_file(task).sources.sample
    for split in ("train", "validation"):
        (folder / split).mkdir(parents=True)
        module.hub_sample(REPO / sample.dir / sample.train_file).to_parquet(str(folder / split / "0000.parquet"))
    o, w = bilm_files
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                f"task={task}",
                f"data.hf_name={local}",
                f"encoder.options={o}",
                f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}",
                "elmo.position=input",
                "trainer.max_epochs=1",
                "trainer.min_updates=0",
                "data.fraction=1.0",  # all of the few examples (the quick profile keeps 10 % of SQuAD's)
                *tiny_sizes(task),
            ],
        )
    record = runner.train(as_run(cfg), tmp_path / "run")
    assert record["train_examples"] > 0 and record["dev"][record["metric"]] >= 0
    dropped = getattr(module, "DROPPED", {})
    assert {k: record["data_stats"]["train"].get(k) for k in dropped} == dropped


def test_offline_default_source_fails_fast_with_one_line(tmp_path):
    env = {
        **__import__("os").environ,
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "0",
    }
    env.pop("ELMO_SHARED", None)  # no local copies either (../shared is not beside tmp_path)
    started = time.time()  # what start-up alone costs on this machine now (other tests may share its cores)
    subprocess.run([sys.executable, "-c", "import datasets, hydra, torch"], capture_output=True, timeout=120)
    startup = time.time() - started
    started = time.time()
    done = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "task=ner", f"runs_root={tmp_path / 'runs'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    seconds = time.time() - started
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "source=local" in lines[0] and "eriktks/conll2003" in lines[0], done.stderr
    assert seconds < max(15, 4 * startup), (seconds, startup)  # the hub's retries are not waited for
    assert not (tmp_path / "runs" / "ner").exists()
