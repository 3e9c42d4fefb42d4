"""Entry point of the suite (Hydra): ``python run.py [mode=...] [task=...] [overrides]``.

Modes:
  train     (default) train a task model with ELMo and write results.json into the run directory
            (outputs/runs/<task>/<key:value+key:value>); a configuration that already has its
            record (same identity: configuration, biLM and data hashes) is skipped, so interrupted
            sweeps resume.
  evaluate  checkpoint=<run dir> data.test_path=FILE: score a trained model on any file.
  predict   checkpoint=<run dir> data.test_path=RAW.txt: tag, classify or pair raw text (experiments/predictor.py).
  finetune  fine-tune the biLM on the task's text only (Table 7).
  dry_run   what train would do (run directory, skip / resume / train) and whether its activation
            cache fits the disk and cache.max_gb; reads the data, builds and writes nothing.
  embed_sample  embed CoNLL-2003 dev sentences with the configured biLM and report tokens/s, into
            embed_sample.out (outputs/embed_sample); ``make demo`` is a training run, not this.

The command line is read and checked before Hydra starts (``experiments.command_line``); this file only
turns the suite's errors into one line and an exit status.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

import experiments.threads  # noqa: F401  (first: threads=auto measures the other processes' work from here)
from experiments.config_store import register
from suite_common.errors import ConfigError, SuiteError


def exit_with(line: str, status: int = 2):
    """The user's one line on stderr, then the exit status (``HYDRA_FULL_ERROR=1``: the traceback instead)."""
    if os.environ.get("HYDRA_FULL_ERROR") == "1" and sys.exc_info()[0] is not None:
        raise
    print(line, file=sys.stderr)
    raise SystemExit(status) from None


try:  # the resolvers conf/config.yaml names, and the typed groups and task files in Hydra's ConfigStore
    register()
except ConfigError as e:  # a task file that cannot be read: one line, before Hydra starts
    exit_with(f"error: {e}")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig):
    from experiments import runner, trained_runs
    from experiments.dry_run import dry_run
    from experiments.embed_sample import embed_sample
    from experiments.predictor import predict_mode
    from experiments.run_config import as_run
    from experiments.run_errors import CtrlCWatch, leave_nothing, one_line
    from experiments.threads import set_torch_threads

    modes = {
        "train": runner.train,
        "evaluate": trained_runs.evaluate,
        "finetune": runner.finetune,
        "embed_sample": embed_sample,
        "predict": predict_mode,
        "dry_run": dry_run,  # a sweep's dry run adds up its jobs' reports (experiments.sweep_total)
    }
    out_dir = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)

    def stopped_by_user():  # a run that has written nothing leaves no directory
        print(leave_nothing(out_dir, Path(cfg.runs_root), stopped=True), file=sys.stderr)
        raise SystemExit(130) from None

    with CtrlCWatch() as ctrl_c:
        try:
            run = as_run(cfg)  # the typed configuration, built once: every mode takes it
            set_torch_threads(run)
            return modes[run.mode](run, out_dir)
        except KeyboardInterrupt:
            stopped_by_user()
        except Exception as e:
            if ctrl_c.seen:  # Ctrl-C that a library turned into its own error: still a stop, not a crash
                stopped_by_user()
            line = one_line(e, out_dir) if isinstance(e, (SuiteError, OSError, MemoryError, RuntimeError)) else None
            if line is None:  # a programming error: the traceback is the report
                raise
            leave_nothing(out_dir, Path(cfg.runs_root))  # the launch directory, or <dir>@<digest> it was routed to
            exit_with(f"error: {line}")


if __name__ == "__main__":
    from experiments.command_line import prepare

    try:
        sys.argv[1:] = prepare(sys.argv[1:])
    except ConfigError as e:
        exit_with(f"error: {e}")
    main()
