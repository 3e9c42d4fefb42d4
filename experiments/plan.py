"""What one launch of ``run.py`` is, resolved once before anything runs (Peters et al. 2018 §3.3-3.4:
where ELMo goes and which frozen encoder feeds it; §5.3 for the probes).

``RunPlan.resolve`` reads a composed configuration and decides, in one place: the kind of run (a task
model, a layer probe, a biLM fine-tuning), where ELMo goes and whether the run reads an encoder (the
typed run's ``position`` and ``reads_encoder``; its mixes are made as ``run.elmo`` says), the data files it reads, its
seed, its identity and digest (``identity``), and the record it writes. ``RunPlan.prepare`` then
chooses its output directory: a finished run of the same identity anywhere below the runs root is
reused, a launch directory holding another identity's record is never written over. The recipes in
``runner`` follow the plan; they do not decide these again.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf

from encoders import Encoder, encoder_for
from encoders.bilm import FINETUNE_SEED
from suite_common.atomic_files import write_text_atomic
from suite_common.typed_config import plain
from tasks.common.data_files import data_files
from tasks.registry import is_probe_function

from . import train_state
from .identity import digest_of, make_identity
from .pipeline import build_features, make_task, task_text, training_splits, with_layers
from .run_config import RunConfig
from .run_directories import (
    claim,
    finished_run,
    mark_finished,
    mark_running,
    record_dir,
    remove_dead_runs,
    remove_if_unused,
    run_metadata,
)


@dataclass
class BuiltRun:
    """What every mode runs on, built from a plan by ``RunPlan.build``: the task (its vocabulary and
    labels), its splits (train cut to ``data.fraction``; none for a trained run), the encoder (the
    fine-tuned biLM where the plan reads one), the splits with their layers (when asked), the ELMo
    mixes the model owns, the model (seeded), the run's ``trainer`` group and the device it trains on."""

    task: object
    splits: dict
    encoder: Encoder
    data: dict | None
    features: object
    model: object
    trainer: object  # run_config.TrainerConfig
    device: str


@dataclass(frozen=True)
class RunPlan:
    run: RunConfig  # the configuration, typed (every group; ``run_config``)
    kind: str  # "task" | "probe" | "finetune"
    data_files: dict[str, Path]
    identity: dict  # what the run's files hold, and the code's version
    digest: str
    record_name: str  # results.json | finetune.json
    seed: int  # the run's seed (``seed``), set once before its model is built
    finetuned_encoder: bool  # ELMo read from the biLM fine-tuned on the task's text (§3.4, encoder.finetune)

    encoder: Encoder  # the encoder the configuration names (``encoders.encoder_for``)

    @classmethod
    def resolve(cls, run: RunConfig | dict, finetune: bool = False) -> RunPlan:
        """The plan of ``run`` (the typed configuration, or a plain mapping of one: a record's); its identity
        holds the version its task registered (``task_version``: probes have their own), whoever resolves it.
        ``finetune``: the biLM fine-tuning of ``mode=finetune`` (Table 7), recorded in ``finetune.json``."""
        if not isinstance(run, (RunConfig, dict)):
            raise TypeError(
                f"RunPlan.resolve takes the typed run (run_config.RunConfig) or a plain mapping, not {type(run)}"
            )
        if isinstance(run, dict):
            run = RunConfig.from_resolved(run)  # every value checked by its field
        encoder = encoder_for(run)
        name = run.task.name
        kind = "finetune" if finetune else "probe" if is_probe_function(name) else "task"
        identity = make_identity(run, encoder)
        if run.reads_encoder and encoder.kind == "bilm" and (finetune or run.encoder.finetune):
            identity["finetune_seed"] = FINETUNE_SEED  # a fine-tuning made before it was seeded is another run
        return cls(
            run=run,
            encoder=encoder,
            kind=kind,
            data_files=data_files(run.data),
            identity=identity,
            digest=digest_of(run, identity),
            record_name="finetune.json" if kind == "finetune" else "results.json",
            seed=int(run.seed),
            finetuned_encoder=encoder.kind == "bilm" and bool(run.encoder.finetune) and run.position != "none",
        )

    def build(self, layers: bool = True, finetune: bool = True, task_state: dict | None = None) -> BuiltRun:
        """The run's pieces, the one way every mode makes them: task, splits and vocabulary (or, with
        ``task_state``, a trained run's vocabulary and labels), the encoder (fine-tuned on the task's text
        where the plan says so and ``finetune``: a dry run estimates that step instead), the splits'
        layers (``layers``), the mixes and the model (after seeding with the run's seed), the trainer's
        settings."""
        from .trainer import set_seed

        task = make_task(self.run)
        splits = {}
        if task_state is None or (finetune and self.finetuned_encoder):
            splits = training_splits(self.run, task)
        if task_state is None:
            task.build_vocab(splits["train"])
        else:
            task.load_state(task_state)
        encoder = self.encoder
        if finetune and self.finetuned_encoder:
            encoder = encoder.finetuned(task_text(task, splits["train"]), task_text(task, splits["dev"]), task.name)
        data = with_layers(self.run, task, splits, encoder) if layers and task_state is None else None
        set_seed(self.seed)  # the model's initialization; fit seeds the training stream again from the same seed
        features = build_features(self.run, encoder)
        model = task.build_model(features)
        return BuiltRun(task, splits, encoder, data, features, model, self.run.trainer, str(self.run.device))

    @property
    def resolved(self) -> dict:
        """The typed run as plain data, every setting written out: what records store and re-parse."""
        return plain(self.run)

    @property
    def position(self) -> str | None:
        """Where ELMo goes: ``none | input | output | both | probe``."""
        return self.run.position

    @property
    def uses_encoder(self) -> bool:
        """A run that does not is the same run whatever biLM or encoder is named."""
        return self.run.reads_encoder

    def prepare(self, launch_dir: Path) -> tuple[Path, dict | None]:
        """``(run directory, finished record or None)``: a record of this identity anywhere below the
        runs root is reused where it is (its directory is returned; nothing is written under this
        launch's name: one configuration, one directory); otherwise the directory this run writes into
        (``record_dir``), marked as running."""
        runs_root = Path(self.run.runs_root)
        for gone in remove_dead_runs(runs_root):
            print(f"removed {gone}: its run was stopped before it wrote anything", file=sys.stderr, flush=True)
        previous = finished_run(launch_dir, runs_root, self.digest, self.record_name)
        if previous is None:  # none yet: claim a directory (waiting for the same configuration running there)
            out_dir = claim(record_dir(launch_dir, self.digest, self.record_name), self.digest)
            previous = finished_run(out_dir, runs_root, self.digest, self.record_name)  # one that finished meanwhile
            if previous is not None:
                mark_finished(out_dir)
                remove_if_unused(out_dir)
        if previous is not None:
            print(f"skipping: this configuration already has its result in {previous.get('run_dir')}", flush=True)
            return Path(previous["run_dir"]), previous
        if (
            out_dir / "train_state.pt"
        ).exists():  # a stopped run to resume: its own, or refused before anything is written
            train_state.read(out_dir / "train_state.pt", self.digest)
        write_text_atomic(out_dir / "resolved_config.yaml", OmegaConf.to_yaml(OmegaConf.create(self.resolved)))
        mark_running(out_dir, self.digest)
        return out_dir, None

    def metadata(self, out_dir: Path, encoder) -> dict:
        """What every record of this run holds besides its measurements (``Record``'s first fields)."""
        return run_metadata(self.run.device, out_dir, encoder.identity(), self.resolved, self.identity, self.digest)
