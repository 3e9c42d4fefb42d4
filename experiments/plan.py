"""What one launch of ``run.py`` is, resolved once before anything runs (Peters et al. 2018 §3.3-3.4: where
ELMo goes and which frozen encoder feeds it; §5.3 for the probes): the kind of run, the encoder, the
identity and digest (``identity``) and the record it writes. The recipes in ``runner`` follow the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from encoders import Encoder, encoder_for
from encoders.bilm import FINETUNE_SEED
from suite_common.typed_config import plain
from tasks.registry import is_probe_function

from .identity import make_identity, run_digest
from .run_config import RunConfig, as_run
from .run_directories import run_metadata


@dataclass(frozen=True)
class RunPlan:
    run: RunConfig  # the configuration, typed (every group; ``run_config``)
    kind: str  # "task" | "probe" | "finetune"
    identity: dict  # what the run's files hold, and the code's version
    digest: str
    record_name: str  # results.json | finetune.json
    finetuned_encoder: bool  # ELMo read from the biLM fine-tuned on the task's text (§3.4, encoder.finetune)
    encoder: Encoder  # the encoder the configuration names (``encoders.encoder_for``)

    @classmethod
    def resolve(cls, run: RunConfig | dict, finetune: bool = False) -> RunPlan:
        """The plan of ``run`` (typed, or a record's plain mapping). ``finetune``: the biLM fine-tuning of
        ``mode=finetune`` (Table 7), recorded in ``finetune.json``."""
        run = as_run(run)
        encoder = encoder_for(run)
        kind = "finetune" if finetune else "probe" if is_probe_function(run.task.name) else "task"
        identity = make_identity(run, encoder)
        if run.reads_encoder and encoder.kind == "bilm" and (finetune or run.encoder.finetune):
            identity["finetune_seed"] = FINETUNE_SEED  # a fine-tuning made before it was seeded is another run
        return cls(
            run=run,
            encoder=encoder,
            kind=kind,
            identity=identity,
            digest=run_digest(run, identity),
            record_name="finetune.json" if kind == "finetune" else "results.json",
            finetuned_encoder=encoder.kind == "bilm" and bool(run.encoder.finetune) and run.position != "none",
        )

    @property
    def resolved(self) -> dict:
        """The typed run as plain data, every setting written out: what records store and re-parse."""
        return plain(self.run)

    def metadata(self, out_dir: Path, encoder) -> dict:
        """What every record of this run holds besides its measurements (``Record``'s first fields)."""
        return run_metadata(self.run.device, out_dir, encoder.identity(), self.resolved, self.identity, self.digest)
