"""Synthetic run records (results.json) for the report's tests, in the layout `run.py` writes them."""

import json

from experiments.record import RECORD_VERSION
from tasks.registry import available, task_class

ENCODER = ("state", "finetune", "warmup_batches")  # keyword arguments that are the encoder's settings


def write_record(
    root,
    task,
    setting,
    seed,
    value,
    fraction=1.0,
    s_in=(0.2, 0.5, 0.3),
    position="input",
    command="python run.py -m task=ner",
    date="2026-11-21T10:00:00+00:00",
    profile="quick",
    **elmo,
):
    metric = task_class(task).metric if task in available() else "accuracy"
    r = {
        "record_version": RECORD_VERSION,
        "task": task,
        "metric": metric,
        "dev": {metric: value},
        "ablation": setting,
        "profile": profile,
        "command": command,
        "date": date,
        "hardware": {"machine": "x86_64", "cpus": 2, "torch_threads": 1, "device": "cpu"},
        "elmo_position": "none" if setting == "baseline" else position,
        "config_hash": f"{task}{setting}{seed}{fraction}",
        "mixing_weights": {} if setting == "baseline" else {"input": {"s": list(s_in), "gamma": 1.0}},
        "config": {
            "seed": seed,
            "data": {"fraction": fraction},
            "task": {"elmo_position": position},
            "elmo": {
                "position": "paper",
                "mix": "all",
                "l2": 0.1,
                **{k: v for k, v in elmo.items() if k not in ENCODER},
            },
            "encoder": {"kind": "bilm", **{k: v for k, v in elmo.items() if k in ENCODER}},
        },
    }
    if elmo.get("finetune"):
        r["bilm_finetune"] = {"dev_perplexity_before": 300.0, "dev_perplexity_after": 150.0}
    d = (
        root
        / task
        / "-".join(map(str, [setting, seed, fraction, *elmo.values()] + ([profile] if profile != "quick" else [])))
    )
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps(r))


def with_bilm(path, sha):
    r = json.loads(path.read_text())
    r["identity"] = {"bilm_sha256": None if r["elmo_position"] == "none" else sha, "data_sha256": {}, "task_version": 1}
    r["bilm"] = {"sha256": sha}
    if r["elmo_position"] != "none":  # another biLM: another identity (a baseline reads none)
        r["config_hash"] = f"{r['config_hash']}-{sha[:4]}"
    path.write_text(json.dumps(r))


def with_composed_config(path, *overrides):
    """A synthetic record given the configuration run.py composes for its choices (and ``overrides``), and the
    digest that configuration has with the record's identity."""
    from omegaconf import OmegaConf
    from run_configs import compose_cfg

    from experiments.plan import run_digest

    r = json.loads(path.read_text())
    choices = [f"task={r['task']}", "source=local", f"+ablation={r['ablation']}", f"profile={r['profile']}"]
    r["config"] = OmegaConf.to_container(
        compose_cfg([*choices, f"seed={r['config']['seed']}", *overrides]), resolve=True
    )
    r["config_hash"] = run_digest(r["config"], r["identity"])
    path.write_text(json.dumps(r))


def write_bert_record(root, task, seed, value, model="/x/bert_core/pretrained/small", sha="b" * 64, layers=None):
    write_record(root / "bert", task, "elmo", seed, value)
    path = next((root / "bert" / task).glob(f"elmo-{seed}-*/results.json"))
    r = json.loads(path.read_text())
    r["identity"] = {"bilm_sha256": None, "encoder_sha256": sha, "data_sha256": {}, "task_version": 1}
    r["bilm"] = {"kind": "transformer", "model": model, "sha256": sha}
    r["config"]["encoder"] = {"kind": "transformer", "pooling": "first"}
    r["config_hash"] += "bert"
    path.write_text(json.dumps(r))


def with_finetune(r, value: bool):
    """The record with its biLM fine-tuning set, in the layout its configuration is written in."""
    import copy

    from experiments.record import Record

    config = copy.deepcopy(r.config)
    config["elmo" if "finetune" in (config.get("elmo") or {}) else "encoder"]["finetune"] = value
    return Record.from_dict({**r.to_dict(), "config": config})


def has_cell(text, mean, n):
    """Whether a table's text has a cell of this mean over n seeds: ``mean [low, high] (n=N)`` (n > 1),
    ``mean ± std (n=N)`` in the variants and encoders tables, or ``mean (n=1)``."""
    import re

    m = re.escape(mean)
    return bool(re.search(rf"(?<![\d.]){m} (\[-?[\d.]+, -?[\d.]+\] |± [\d.]+ )?\(n={n}\)", text))


# the keys the quick and paper profiles changed on 2026-12-01 (static vectors, xavier_uniform, at least 500 quick
# updates): a report of records made before them accepts them, as the committed history tables do
BEFORE_VECTORS = ["task.model.embedding_init", "task.model.freeze_vectors", "task.model.vectors", "trainer.min_updates"]
