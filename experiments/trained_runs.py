"""What is done with a trained run (Peters et al. 2018 §4: the task models scored on held-out data):
load its ``best.pt`` with the encoder it was trained with (a fine-tuned biLM included) and score any
file with it (``mode=evaluate``), writing an ``Evaluation`` record beside the run.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from operator import attrgetter
from pathlib import Path

from suite_common.checkpoints import load_tensors
from suite_common.errors import ConfigError, DataError, WeightsError
from suite_common.hashing import content_sha256, sha256_hex

from .pipeline import build_run, with_layers
from .plan import RunPlan
from .run_config import RunConfig, evaluate_overrides
from .run_directories import write_json_atomic
from .trainer import predict


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """``eval_results.json``: a trained model scored on one file (``mode=evaluate``). ``encoder`` is the
    encoder's identity whatever its kind (``encoder_kind``: ``bilm`` or ``transformer``)."""

    checkpoint: str
    test_path: str
    test_sha256: str
    task: str
    metric: str
    metrics: dict
    data_stats: dict
    data_warnings: list
    prediction_file: str
    data_format: str | None  # the reader used: the training run's format
    overrides: dict
    encoder_kind: str
    encoder: dict
    date: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def command_line_overrides(run: RunConfig, prefixes: tuple[str, ...]) -> dict:
    """The keys under ``prefixes`` that this command line set, with their values in the typed run."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return {}
    keys = [o.lstrip("+~").split("=", 1)[0] for o in HydraConfig.get().overrides.task]
    return {k: attrgetter(k)(run) for k in keys if k.startswith(prefixes)}


def checkpoint_file(checkpoint) -> Path:
    """``checkpoint=``: a run directory or its ``best.pt``."""
    if not checkpoint:
        raise ConfigError("mode=evaluate needs checkpoint=RUN_DIR (or RUN_DIR/best.pt)")
    path = Path(checkpoint)
    path = path / "best.pt" if path.is_dir() else path
    if not path.is_file():
        raise ConfigError(f"checkpoint={checkpoint}: no such run directory or best.pt")
    return path


def evaluate(run: RunConfig, out_dir: Path | None = None) -> dict:  # out_dir: unused, results go beside the run
    """Score a trained model on ``data.test_path``, read the way its training data was read
    (``data.format`` and reader options from the checkpoint; ``data.*``/``elmo.*`` given on the
    command line override them). Results go to ``<run dir>/evaluations/<file>@<content hash>/``:
    one directory per (checkpoint, test file)."""
    path = checkpoint_file(run.checkpoint)
    test_path = test_file(run, "evaluate")
    overrides = command_line_overrides(run, evaluate_overrides())
    saved, task, model, encoder = load_trained(path, run.device, overrides)
    examples, stats = task.read_file(test_path, saved.data, "test")  # the format the model was trained on
    splits, task.data_stats = {"test": task.prepare(examples, "test")}, {"test": stats}
    for warning in task.data_warnings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    test = with_layers(saved, task, splits, encoder)["test"]
    predictions = predict(task, model, test, saved.trainer.eval_batch_size)
    metrics = task.score(splits["test"], predictions)
    options_sha256 = getattr(encoder, "options_sha256", None)
    identity = {**encoder.identity(), **({"options_sha256": options_sha256} if options_sha256 else {})}
    out = evaluation_dir(path, test_path, {"encoder": identity, "overrides": overrides})
    written = task.write_predictions(splits["test"], predictions, out / "predictions")
    report = Evaluation(
        checkpoint=str(path),
        test_path=str(test_path),
        test_sha256=content_sha256(test_path),
        task=task.name,
        metric=task.metric,
        metrics=metrics,
        data_stats=task.data_stats,
        data_warnings=task.data_warnings(),
        prediction_file=str(written),
        data_format=getattr(saved.data, "format", None) or next(iter(task.readers), None),
        overrides={k: str(v) for k, v in overrides.items()},
        encoder_kind=encoder.kind,
        encoder=identity,
        date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    ).to_dict()
    write_json_atomic(out / "eval_results.json", report)
    print(f"{task.name} {task.metric} on {test_path}: {metrics[task.metric]:.2f}", flush=True)
    print(f"predictions: {written}\nevery metric, the data read and the model: {out / 'eval_results.json'}", flush=True)
    return report


def evaluation_dir(checkpoint: Path, test_path: Path, inputs: dict) -> Path:
    """``<run dir>/evaluations/<file>@<content hash>/``; when an earlier evaluation there read other
    inputs (another encoder file or override), it is kept and this one goes to ``...-<inputs' hash>``."""
    base = checkpoint.parent / "evaluations" / f"{Path(test_path).name}@{content_sha256(test_path)[:12]}"
    out = base
    try:
        earlier = (
            json.loads((base / "eval_results.json").read_text()) if (base / "eval_results.json").is_file() else None
        )
    except (OSError, ValueError):
        earlier = None
    mine = json.loads(json.dumps(inputs, default=str))
    if earlier is not None and {"encoder": earlier.get("encoder"), "overrides": earlier.get("overrides")} != {
        "encoder": mine["encoder"],
        "overrides": {k: str(v) for k, v in mine["overrides"].items()},
    }:
        digest = sha256_hex(json.dumps(mine, sort_keys=True))[:8]
        out = base.with_name(f"{base.name}-{digest}")
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_file(run: RunConfig, mode: str) -> Path:
    test_path = getattr(run.data, "test_path", None)
    if not test_path:
        raise ConfigError(f"mode={mode} needs data.test_path=FILE")
    if not Path(test_path).is_file():
        raise DataError(f"{test_path}: no such file (data.test_path)")
    return Path(test_path)


def load_trained(path: Path, device: str = "cpu", overrides: dict | None = None):
    """``(configuration, task, model, encoder)`` of a trained run's ``best.pt`` (tensors only), rebuilt through
    the plan of its own configuration with ``overrides`` (key -> value: where the data and the encoder's files
    are) and ``device`` over it; the encoder must be the one it was trained with (SHA-256), a fine-tuned biLM
    included."""
    ckpt = load_tensors(path)
    given = json.loads(json.dumps(ckpt["config"]))  # a copy, plain data
    for key, value in {"device": device, **(overrides or {})}.items():
        *parents, last = key.split(".")
        node = given
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    plan = RunPlan.resolve(given)  # built and checked as a new run's
    built = build_run(plan, layers=False, task_state=ckpt["task_state"])  # the fine-tuned biLM where it read one
    encoder, trained_with = built.encoder, ckpt["encoder_sha256"]
    if encoder.sha256 != trained_with:
        raise WeightsError(
            f"{encoder.files} is not the {'biLM' if encoder.kind == 'bilm' else 'model'} this model "
            f"was trained with (SHA-256 {trained_with[:12]}...){shipped_hint(trained_with)}"
        )
    trained_options = trained_options_sha256(path, ckpt)
    if encoder.kind == "bilm" and trained_options and encoder.options_sha256 != trained_options:
        raise WeightsError(
            f"{encoder.options}: not the options.json this model was trained with (SHA-256 "
            f"{trained_options[:12]}..., this one {encoder.options_sha256[:12]}...): the same weights read "
            "with other options are another biLM"
        )
    built.model.load_state_dict(ckpt["model"])
    built.model.to(device).eval()
    return plan.run, built.task, built.model, encoder


def trained_options_sha256(path: Path, ckpt: dict) -> str | None:
    """The SHA-256 of the biLM ``options.json`` a trained model read: kept in ``best.pt`` since 2026-11-26,
    before that in the run's record beside it (``identity.bilm_options_sha256``)."""
    if ckpt.get("encoder_options_sha256"):
        return ckpt["encoder_options_sha256"]
    record = path.parent / "results.json"
    try:
        identity = json.loads(record.read_text()).get("identity") if record.is_file() else None
    except (OSError, ValueError):
        return None
    return identity.get("bilm_options_sha256") if isinstance(identity, dict) else None


def shipped_hint(sha256: str) -> str:
    """Which shipped biLM has these weights, as the overrides that select it."""
    from elmo_core import file_sha256
    from elmo_core.pretrained import ROOT

    for d in sorted(ROOT.iterdir()):
        if (d / "weights.hdf5").exists() and file_sha256(d / "weights.hdf5") == sha256:
            rel = d.relative_to(ROOT.parents[1])
            return (
                f"; it is the shipped {d.name}: add encoder.options={rel}/options.json "
                f"encoder.weights={rel}/weights.hdf5"
            )
    return ""
