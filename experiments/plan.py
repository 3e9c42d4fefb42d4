"""What one launch of ``run.py`` is, resolved once before anything runs (Peters et al. 2018 §3.3-3.4:
where ELMo goes and which frozen encoder feeds it; §5.3 for the probes).

``RunPlan.resolve`` decides, in one place: the kind of run (a task model, a layer probe, a biLM
fine-tuning), the encoder, the data files, the seed, the identity and digest (``identity``), and the
record it writes. The recipes in ``runner`` follow the plan (``pipeline.build_run`` makes its pieces,
``run_directories.prepare_run_dir`` its directory); they do not decide these again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from encoders import Encoder, encoder_for
from encoders.bilm import FINETUNE_SEED
from suite_common.typed_config import plain
from tasks.common.data_files import data_files
from tasks.registry import is_probe_function

from .identity import digest_of, make_identity
from .run_config import RunConfig, as_run
from .run_directories import run_metadata


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
        run = as_run(run)  # a mapping: every value checked by its field
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

    @property
    def resolved(self) -> dict:
        """The typed run as plain data, every setting written out: what records store and re-parse."""
        return plain(self.run)

    def metadata(self, out_dir: Path, encoder) -> dict:
        """What every record of this run holds besides its measurements (``Record``'s first fields)."""
        return run_metadata(self.run.device, out_dir, encoder.identity(), self.resolved, self.identity, self.digest)
