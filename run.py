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
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

import experiments.threads  # noqa: F401  (first: threads=auto measures the other processes' work from here)


def embed_sample(run, out_dir: Path) -> None:
    """Embeds ``embed_sample.limit`` sentences of ``embed_sample.sentences`` into ``out_dir`` (``run``: the
    typed configuration, ``experiments.run_config.RunConfig``)."""
    from elmo_core import load_bilm
    from elmo_core.embed import embed_file
    from experiments.plan import RunPlan
    from suite_common.atomic_files import write_text_atomic
    from suite_common.errors import ConfigError
    from tasks.ner.reader import read_conll2003_file

    source = RunPlan.resolve(run).encoder  # the encoder as any run of this configuration builds it
    if source.kind != "bilm":
        raise ConfigError("mode=embed_sample embeds with the biLM (encoder=bilm)")
    options, weights = source.options, source.weights
    bilm = load_bilm(
        options, weights, stateful=source.state != "stateless", device=run.device, allow_extra=source.allow_extra
    )
    sample = run.embed_sample
    ds, _ = read_conll2003_file(sample.sentences)
    sentences = list(ds["tokens"])[: sample.limit]
    text = out_dir / "sentences.txt"
    write_text_atomic(text, "\n".join(" ".join(s) for s in sentences) + "\n")
    start = time.perf_counter()
    n = embed_file(bilm, text, out_dir / "embeddings.hdf5", sample.batch_size)
    seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    report = {
        "biLM": source.identity(),
        "sentences": n,
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
        "output": str(out_dir / "embeddings.hdf5"),
    }
    write_text_atomic(out_dir / "embed_sample.json", json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def mode_dir(mode: str, runs_root: str, task: str, overrides: str, embed_sample_out: str) -> str:
    """Hydra's output directory: a run directory per configuration for train and finetune,
    ``embed_sample.out`` for embed_sample. evaluate and predict write beside their checkpoint and
    dry_run writes nothing: the directory Hydra makes for them is the user's own scratch one
    (``scratch_dir``: nothing is written into it), never a run directory another run may be using."""
    from experiments.run_directories import run_dir_name, scratch_dir

    if mode == "embed_sample":
        return embed_sample_out
    if mode in ("evaluate", "predict", "dry_run"):
        return str(scratch_dir())
    return f"{runs_root}/{task}/{run_dir_name(overrides)}"


def sweep_dir(mode: str, runs_root: str) -> str:
    """Hydra's directory of a ``-m`` sweep: the runs root, or for the modes that write nothing there
    (a sweep's dry run) the same scratch directory as ``mode_dir``'s."""
    from experiments.run_directories import scratch_dir

    return str(scratch_dir()) if mode in ("evaluate", "predict", "dry_run") else runs_root


def _register_resolvers() -> None:
    """The resolvers ``conf/config.yaml`` names, and the typed groups' defaults and the task files'
    data and profiles in Hydra's ConfigStore (``experiments.config_store``)."""
    from experiments.config_store import register
    from experiments.run_directories import run_dir_name
    from suite_common.errors import ConfigError

    try:
        register()
    except ConfigError as e:  # a task file that cannot be read: one line, before Hydra starts
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None

    OmegaConf.register_new_resolver("run_dir_name", run_dir_name, replace=True)
    OmegaConf.register_new_resolver("mode_dir", mode_dir, replace=True)
    OmegaConf.register_new_resolver("sweep_dir", sweep_dir, replace=True)


_register_resolvers()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig):
    from experiments import runner, trained_runs
    from experiments.run_config import as_run
    from suite_common.atomic_files import write_text_atomic
    from suite_common.errors import SuiteError
    from suite_common.typed_config import plain

    out_dir = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    from experiments.dry_run import dry_run
    from experiments.predictor import predict_mode

    modes = {
        "train": runner.train,
        "evaluate": trained_runs.evaluate,
        "finetune": runner.finetune,
        "embed_sample": embed_sample,
        "predict": predict_mode,
        "dry_run": dry_run,
    }
    try:
        run = as_run(cfg)  # the typed configuration, built once: every mode takes it
        set_threads(run)
        if run.mode == "embed_sample":  # train and finetune write theirs into the run directory they choose
            out_dir.mkdir(parents=True, exist_ok=True)
            write_text_atomic(out_dir / "resolved_config.yaml", OmegaConf.to_yaml(OmegaConf.create(plain(run))))
        return modes[run.mode](run, out_dir)  # a sweep's dry run adds up its jobs' reports (experiments.sweep_total)
    except KeyboardInterrupt:  # stopped by the user: a run that has written nothing leaves no directory
        from experiments.run_directories import release_claims, remove_if_unused, stopped_message

        claimed = {out_dir, *release_claims()}
        message = stopped_message(claimed)
        for directory in claimed:
            remove_if_unused(directory, Path(cfg.runs_root))
        print(message, file=sys.stderr)
        raise SystemExit(130) from None
    except (SuiteError, OSError, MemoryError, RuntimeError) as e:  # one line, exit status 2
        line = one_line(e, out_dir)
        if line is None:  # a programming error: the traceback is the report
            raise
        from experiments.run_directories import release_claims, remove_if_unused

        for claimed in {out_dir, *release_claims()}:  # the launch directory, or <dir>@<digest> it was routed to
            remove_if_unused(claimed, Path(cfg.runs_root))
        if os.environ.get("HYDRA_FULL_ERROR") == "1":  # the full traceback, on request
            raise
        print(f"error: {line}", file=sys.stderr)
        raise SystemExit(2) from None


def one_line(e: Exception, out_dir: Path) -> str | None:
    """The user's one line for a configuration, data or weights error, a file that cannot be written
    (disk full, read-only, no permission) or memory that ran out; None for anything else."""
    from suite_common.errors import WRITE_ERRNOS, SuiteError, storage_error

    if isinstance(e, SuiteError):
        return str(e)
    if isinstance(e, OSError) and e.errno in WRITE_ERRNOS:
        return str(storage_error(e.filename or out_dir, e))
    text = str(e)
    if isinstance(e, MemoryError) or "out of memory" in text or "can't allocate memory" in text:
        return (
            f"out of memory ({text.splitlines()[0][:160] if text else type(e).__name__}); lower "
            "trainer.batch_size or trainer.eval_batch_size, or use cache.enabled=true"
        )
    return None


def set_threads(run) -> None:
    """torch's CPU threads for this run (``threads``; ``auto`` divides the free cores among the jobs
    of a parallel launcher)."""
    import torch
    from hydra.core.hydra_config import HydraConfig

    from experiments.threads import choose_threads, parallel_jobs

    launcher = HydraConfig.get().launcher if HydraConfig.initialized() else {}
    threads = choose_threads(run.threads, parallel_jobs(launcher.get("n_jobs") if "n_jobs" in launcher else 1))
    torch.set_num_threads(threads)
    print(f"torch threads: {threads} (threads={run.threads})", flush=True)


HYDRAS_OWN = {"--hydra-help", "-sc", "--shell-completion"}  # flags whose command composes no run of the suite's


def check_command_line() -> None:
    """Unknown keys and group options stop here, in one line with exit status 2, before Hydra
    creates anything (``experiments.override_check``); so does a runs root that cannot be written."""
    from experiments.override_check import check_overrides
    from suite_common.errors import ConfigError

    if HYDRAS_OWN & set(sys.argv[1:]):  # Hydra's help or shell completion: no run, its words are not overrides
        return
    try:
        check_one_command(sys.argv[1:])
        check_no_chdir(sys.argv[1:])
        check_overrides(sys.argv[1:])
        check_runs_root(sys.argv[1:])
        check_files_given(sys.argv[1:])
    except ConfigError as e:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":  # the full traceback, on request
            raise
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def check_one_command(argv: list[str]) -> None:
    """Hydra runs one command at a time (``--run``, ``-m``, ``--cfg``, ``--info``, ``--shell-completion``); two of
    them (``-m --cfg job``) are one line here instead of the ValueError it raises before its own error handling."""
    import contextlib
    import io

    from hydra._internal.utils import get_args_parser

    from suite_common.errors import ConfigError

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args = get_args_parser().parse_intermixed_args(argv)
    except SystemExit:
        return  # Hydra's parser says what is wrong
    commands = {"--run (-r)": args.run, "--multirun (-m)": args.multirun, "--cfg (-c)": args.cfg is not None,
                "--info (-i)": args.info is not None, "--shell-completion (-sc)": args.shell_completion}  # fmt: skip
    given = [name for name, on in commands.items() if on]
    if len(given) > 1:
        hint = "; to see a sweep job's configuration, run --cfg job with that job's values" if args.multirun else ""
        raise ConfigError(f"{' and '.join(given)} together: Hydra runs one of {', '.join(commands)} per command"
                          f"{hint}; nothing was run")  # fmt: skip


def check_no_chdir(argv: list[str]) -> None:
    """``hydra.job.chdir=true`` would start each job inside its own run directory, where the relative paths of the
    command line and the defaults (``runs_root``, ``../shared``, the cache) no longer lead where they were typed:
    refused in one line. The suite names its directories itself; a job never needs to change into one."""
    from suite_common.errors import ConfigError

    for arg in argv:
        key, _, value = arg.lstrip("+").partition("=")
        if key == "hydra.job.chdir" and value.strip().lower() not in ("false", "no", "0", "null", ""):
            raise ConfigError(f"{arg}: the suite runs every job from the directory it was started in (its run "
                              "directories are named by runs_root=, its relative paths read from there); leave "
                              "hydra.job.chdir out; nothing was run")  # fmt: skip


def check_runs_root(argv: list[str]) -> None:
    """``runs_root`` (command line, ``ELMO_RUNS_ROOT`` or ``outputs/runs``) and ``embed_sample.out``, the
    directories Hydra creates before the run starts, must be usable: not empty (``runs_root=`` would put the
    runs at the file system's root), not a file, and writable, which is tried by making and removing a
    directory in the nearest one that exists (a read-only or virtual file system such as /proc refuses it)."""
    import tempfile

    from suite_common.errors import ConfigError
    from suite_common.output_paths import forbidden_output
    from suite_common.typed_config import blank_path

    outputs = ("runs_root=", "embed_sample.out=", "hydra.run.dir=", "hydra.sweep.dir=")
    given = {a.lstrip("+").split("=", 1)[0]: a.split("=", 1)[1] for a in argv if a.lstrip("+").startswith(outputs)}
    env = os.environ.get("ELMO_RUNS_ROOT")
    roots = {"runs_root": given.get("runs_root", env if env is not None else "outputs/runs")}
    roots.update({k: v for k, v in given.items() if k != "runs_root" and "${" not in v})
    for key, text in roots.items():
        shown = f"{key}={text}" if key in given or env is None else f"ELMO_RUNS_ROOT={text!r}"
        if blank_path(text):
            raise ConfigError(f"{shown}: {blank_path(text)}; nothing was run")
        if forbidden_output(text):
            raise ConfigError(f"{shown}: {forbidden_output(text)}; choose a folder of your own; nothing was run")
        root = Path(text)
        existing = root
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.exists() and not existing.is_dir():
            raise ConfigError(f"{shown}: {existing} is a file, not a directory; choose another {key}=")
        try:
            Path(tempfile.mkdtemp(prefix=".write-check-", dir=existing)).rmdir()
        except OSError as e:
            ro = existing.exists() and os.statvfs(existing).f_flag & os.ST_RDONLY
            why = "read-only file system" if ro else (e.strerror or type(e).__name__).lower()
            raise ConfigError(f"{shown}: {existing} cannot be written ({why}); choose another {key}=") from None


FILES_READ = ("encoder.options", "encoder.weights", "task.model.vectors", "data.train_path", "data.dev_path",
              "data.test_path")  # fmt: skip


def check_files_given(argv: list[str]) -> None:
    """Every file a run reads that the command line names must be a readable regular file, checked before
    Hydra makes the run's directory: a wrong ``encoder.weights=`` (the original file is ``weights.hdf5``,
    bilm-tf's ``lm_weights.hdf5``) is one line that names the ``.hdf5`` files beside it, not a traceback."""
    from suite_common.bounded_files import data_file_problem
    from suite_common.errors import ConfigError
    from suite_common.remote_files import is_url

    for key, value in (a.split("=", 1) for a in argv if "=" in a and not a.startswith("-")):
        key = key.lstrip("+")
        if (
            key not in FILES_READ
            or value in ("", "null", "None", "shipped")
            or is_url(value)
            or "," in value
            or "${" in value
        ):
            continue
        problem = data_file_problem(value)
        if problem:
            folder = Path(value).parent
            near = sorted(p.name for p in folder.glob("*.hdf5")) if key == "encoder.weights" and folder.is_dir() else []
            hint = f"; {folder} holds {', '.join(near)}" if near else ""
            raise ConfigError(f"{key}={value}: {problem}{hint}; nothing was run")


DATA_MODES = ("train", "dry_run", "finetune")


def choose_data_source(argv: list[str], reachable=None) -> list[str]:
    """``source=`` left out of a run that reads task data: the Hugging Face hub when it can be reached
    (``source=hf``), else the local copies under ``$ELMO_SHARED/data`` (default ``../shared/data``) when
    they are there (``source=local``); one line says which. ``argv`` with the choice added, if one was made.
    Either way the record names the data by its content, so the report keeps the two apart."""
    keys = {a.split("=", 1)[0].lstrip("+~") for a in argv if "=" in a}
    modes = [a.split("=", 1)[1] for a in argv if a.startswith("mode=")]
    if (
        HYDRAS_OWN & set(argv)
        or "source" in keys
        or (modes and modes[-1] not in DATA_MODES)
        or any(k == "data" or k.startswith("data.") for k in keys)  # a data set chosen or placed by the user
    ):
        return argv
    if reachable is None:
        from tasks.common.hub import hub_reachable

        reachable = lambda: os.environ.get("HF_HUB_OFFLINE") not in ("1", "true", "True") and hub_reachable(2.0)  # noqa: E731
    shared = Path(os.environ.get("ELMO_SHARED", "../shared")) / "data"
    if reachable():
        print("data: the Hugging Face hub (source=hf; source=local reads the local copies)", file=sys.stderr)
        return argv
    if shared.is_dir():
        print(
            f"data: the local copies under {shared} (source=local; the Hugging Face hub cannot be reached)",
            file=sys.stderr,
        )
        return ["source=local", *argv]  # argv has its overrides first (overrides_first)
    return argv  # neither: the hub's own error says what to do


def overrides_first(argv: list[str]) -> list[str]:
    """``argv`` with the overrides first, in their order, then Hydra's flags in theirs. Hydra's parser reads
    the overrides as one run of positional arguments, so ``task=ner --cfg job seed=1`` (or an override the
    suite adds in front of ``-m``) is refused there; read intermixed, every placement of ``-m``, ``--cfg job``,
    ``-cn NAME``, ``--info``, ... means the same. Arguments Hydra's parser refuses anyway are left to its error."""
    import contextlib
    import io

    from hydra._internal.utils import get_args_parser

    argv = list(argv)
    for k, arg in enumerate(argv[:-1]):  # --info's topic is optional: an override after it is no topic
        if arg in ("--info", "-i") and "=" in argv[k + 1]:
            argv = [*argv[:k], *argv[k + 1 :], arg]
            break
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            overrides = get_args_parser().parse_intermixed_args(argv).overrides
    except SystemExit:
        return argv
    flags = list(argv)
    for override in overrides:
        flags.remove(override)
    return [*overrides, *flags]


if __name__ == "__main__":
    sys.argv[1:] = choose_data_source(overrides_first(sys.argv[1:]))
    check_command_line()
    main()
