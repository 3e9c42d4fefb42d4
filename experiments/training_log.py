"""Live training curves (``logger=tensorboard|wandb|mlflow|none``), written by each library's own writer
into the run directory while a task trains: per update the learning rate and the gradient norm (before
clipping), per epoch the training loss, the dev metric and every ELMo mix's layer weights (softmax-
normalized s_j and γ, Peters et al. 2018 §3.2 eq. 1), as Figure 2 reads them at the end.

The logs are not part of a run's identity (``logger`` is a runtime setting) and no table reads them;
``results.json`` stays the record. TensorBoard: ``.venv/bin/tensorboard --logdir outputs/runs``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from suite_common.errors import ConfigError

LOGGERS = ("tensorboard", "wandb", "mlflow", "none")


class TrainingLog:
    """Where the curves go: ``scalars(values, step)`` with names such as ``dev/f1`` or ``update/lr``."""

    def scalars(self, values: dict[str, float], step: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class TensorBoardLog(TrainingLog):
    def __init__(self, out_dir: Path):
        from torch.utils.tensorboard import SummaryWriter

        folder = out_dir / "tensorboard"
        folder.mkdir(exist_ok=True)  # a file of that name, or a folder that cannot be made: an OSError
        probe = folder / f".write-check-{os.getpid()}"
        probe.write_bytes(b"")  # the writer's own thread would fail later, and garbled
        probe.unlink()
        self.writer = SummaryWriter(log_dir=str(folder))

    def scalars(self, values: dict[str, float], step: int) -> None:
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)

    def close(self) -> None:
        self.writer.close()


class WandbLog(TrainingLog):
    def __init__(self, out_dir: Path):
        import wandb  # optional: pip install wandb; WANDB_MODE=offline keeps the run local

        self.run = wandb.init(
            dir=str(out_dir), name=out_dir.name, project=os.environ.get("WANDB_PROJECT", "elmo-suite")
        )

    def scalars(self, values: dict[str, float], step: int) -> None:
        self.run.log(values, step=step)

    def close(self) -> None:
        self.run.finish()


class MlflowLog(TrainingLog):
    def __init__(self, out_dir: Path):
        import mlflow  # optional: pip install mlflow; MLFLOW_TRACKING_URI chooses the server

        if not os.environ.get("MLFLOW_TRACKING_URI"):
            mlflow.set_tracking_uri((out_dir / "mlruns").resolve().as_uri())
        self.mlflow = mlflow
        self.run = mlflow.start_run(run_name=out_dir.name)

    def scalars(self, values: dict[str, float], step: int) -> None:
        self.mlflow.log_metrics({k.replace("/", "."): v for k, v in values.items()}, step=step)

    def close(self) -> None:
        self.mlflow.end_run()


def open_training_log(kind: str, out_dir: Path) -> TrainingLog | None:
    """The run's log of the chosen kind in ``out_dir`` (None for ``none``); a library that is not
    installed is one line saying how to install it."""
    if kind == "none":
        return None
    makers = {"tensorboard": TensorBoardLog, "wandb": WandbLog, "mlflow": MlflowLog}
    if kind not in makers:
        raise ConfigError(f"logger={kind}: one of {', '.join(LOGGERS)}")
    try:
        return makers[kind](Path(out_dir))
    except ImportError as e:
        raise ConfigError(
            f"logger={kind}: {e.name or kind} is not installed (pip install {kind}), or use logger=none"
        ) from None
    except OSError as e:  # curves are no evidence: the run goes on, and writes its record
        where = e.filename or out_dir
        print(f"warning: logger={kind}: cannot write the curves in {where} ({e.strerror or e}); "
              "training goes on without them", file=sys.stderr, flush=True)  # fmt: skip
        return None


def mix_weights(model) -> dict[str, float]:
    """Every ELMo mix of the model (its ScalarMix modules, named by where they sit): s_j after the
    softmax and γ, as ``mix/<where>/s<j>`` and ``mix/<where>/gamma``."""
    from elmo_core.scalar_mix import ScalarMix

    values = {}
    for where, module in model.named_modules():
        if isinstance(module, ScalarMix):
            name = where or "mix"
            for j, w in enumerate(module.weights().detach().tolist()):
                values[f"mix/{name}/s{j}"] = w
            values[f"mix/{name}/gamma"] = float(module.gamma.detach())
    return values
