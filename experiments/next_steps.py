"""What a finished run prints (Peters et al. 2018 Table 1 is one row of two runs): its dev metric, and the
next steps, each a command that runs as printed when pasted into a new shell: scoring a file with the trained
model, the same configuration without ELMo, and the report that makes a table of the runs (into a table
folder of the run's biLM's own)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from suite_common.errors import SuiteError

from .record import Record

RUN_PY = Path(__file__).resolve().parents[1] / "run.py"


def announce(r: Record, results_path: Path, runs_root: Path, reused: bool = False) -> None:
    """The run's dev metric and the command that scores a file with its model (also when a
    finished configuration is skipped: the model is in the directory that trained it, and the metric
    shown is the one its kept predictions give, not the number its record holds)."""
    if not r.metric or not isinstance(r.dev, dict) or r.metric not in r.dev:
        return
    shown = rescored_metric(r) if reused else f"{r.dev[r.metric]:.2f}"
    print(f"dev {r.metric}: {shown}  ->  {results_path}", flush=True)
    trained_in = Path(r.reused_from or r.run_dir or results_path.parent)
    for line in next_steps(r, trained_in, runs_root):
        print(line, flush=True)


def rescored_metric(r: Record) -> str:
    """A reused record's dev metric as its kept predictions score it (``experiments.rescoring``), saying
    so, and saying what the record holds when that differs; or the recorded one, saying why it is not
    re-scored."""
    from .rescoring import TOLERANCE, NotRescored, RescoringFailed, rescore

    recorded = r.dev[r.metric]
    try:
        found = rescore(r).value
    except (NotRescored, RescoringFailed, SuiteError) as e:
        return f"{recorded:.2f} (as recorded; not re-scored: {e})"
    if isinstance(recorded, (int, float)) and abs(found - recorded) <= TOLERANCE:
        return f"{found:.2f} (re-scored from its kept predictions)"
    return f"{found:.2f} (re-scored from its kept predictions; its record says {recorded}, so no table takes it)"


def next_steps(r: Record, trained_in: Path, runs_root: Path) -> list[str]:
    """What to run next, each line as it runs when pasted: score a file with the trained model (its own
    dev file when it read a local one, which exists), the same configuration without ELMo when it had
    ELMo, and the report that makes a table of the runs under this launch's ``runs_root``."""
    from tasks.common.data_files import data_files

    python, run_py = python_command(), reachable(RUN_PY)
    lines = []
    if (trained_in / "best.pt").is_file():
        dev = data_files(r.run.data).get("dev")
        test = override_word("data.test_path", str(dev)) if dev is not None and dev.is_file() else "data.test_path=FILE"
        checkpoint = override_word("checkpoint", str(trained_in))
        lines.append(f"score a file with it: {python} {run_py} mode=evaluate {checkpoint} {test}")
    root = shlex.quote(str(runs_root))
    launch = launch_overrides()
    if r.uses_encoder and not r.is_probe:
        kept = without_elmo(launch if launch is not None else list(r.choices))
        given_root = any(o.startswith("runs_root=") for o in kept)
        kept += ["+ablation=baseline", *([] if given_root else [f"runs_root={root}"])]
        lines.append(f"the same without ELMo: {python} {run_py} {' '.join(shlex.quote(o) for o in kept)}")
    options = report_options(r, runs_root, launch or [])
    lines.append(f"a table of the runs: {python} -m reporting.report --runs {root} {options}")
    return lines


def override_word(key: str, value: str) -> str:
    """``key=value`` as one shell word that Hydra reads back as ``value``: quoted for Hydra where the value
    holds a character of its override grammar (a run directory named after ``task.model.hidden=[8]``)."""
    if re.fullmatch(r"[\w./:+@%~-]*", value):
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")  # Hydra's quoted string
    word = f"{key}='{escaped}'"
    return f'"{word}"' if not re.search(r'["$`\\!]', word) else shlex.quote(word)  # the shell's word


def report_options(r: Record, runs_root: Path, launch: list[str]) -> str:
    """The report's options for this run's table, so that the printed line runs as printed whatever else the
    runs root holds: its profile, its biLM (a SHA-256 prefix; a baseline reads none and joins any biLM's
    table), ``--accept`` for each setting the launch changed on purpose (``trainer.max_epochs=1``: without it
    the run would be an extra, not a cell), and a table directory beside the runs root (``outputs/tables``
    for ``outputs/runs``)."""
    options = [f"--profile {shlex.quote(r.profile)}"] if r.profile else []
    if r.uses_encoder and r.bilm_sha256:
        options.append(f"--bilm {r.bilm_sha256[:12]}")
    keys = dict.fromkeys(o.split("=", 1)[0].lstrip("+~") for o in without_elmo(launch) if "=" in o)
    accepted = [k for k in keys if "." in k and not k.startswith(("hydra.", "embed_sample."))]
    if "task.model.word_dim" in accepted and "task.model.vectors" not in keys:
        accepted.append("task.model.vectors")  # the shipped vectors follow the size: another file, or none
    options += [f"--accept {' '.join(accepted)}"] if accepted else []
    tables = Path(runs_root).parent / table_folder(r)
    return " ".join([*options, f"--out {shlex.quote(str(tables))}"])


def table_folder(r: Record) -> str:
    """The table folder a run's report goes to: ``tables`` for the embedded biLM's runs (and runs without
    one), ``tables-<name>-<SHA-256 prefix>`` for another biLM's, so that each biLM has tables of its own
    (a table folder reports one biLM)."""
    from elmo_core.pretrained import model_dir
    from suite_common.hashing import content_sha256

    if not (r.uses_encoder and r.bilm_sha256) or r.bilm_sha256 == content_sha256(model_dir() / "weights.hdf5"):
        return "tables"
    options = getattr(r.run.encoder, "options", None) or ""  # a biLM's
    name = re.sub(r"[^A-Za-z0-9_.-]", "", Path(options).parent.name)[:40] if options else ""
    return "-".join(["tables", *([name] if name else []), r.bilm_sha256[:12]])


ELMO_GROUPS = ("elmo", "encoder", "cache", "ablation")  # what a run without ELMo leaves out of its command line


def without_elmo(overrides: list[str]) -> list[str]:
    """The overrides of a launch less those that choose or set ELMo (``elmo.*``, ``encoder*``, ``cache.*``,
    an ablation, ``task.elmo_position``): every other one (seed, data, trainer, model) is kept."""
    kept = []
    for o in overrides:
        key = o.split("=", 1)[0].lstrip("+~")
        if key.split(".")[0].split("/")[0] not in ELMO_GROUPS and key != "task.elmo_position":
            kept.append(o)
    return kept


def launch_overrides() -> list[str] | None:
    """This job's overrides as Hydra read them (one job of a sweep: its own values), or None outside
    a Hydra launch (a run started from Python)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    return list(HydraConfig.get().overrides.task)


def python_command() -> str:
    """How to call this Python from a new shell: the project's ``.venv/bin/python`` (``reachable``) when it runs
    in a virtual environment that is not activated there."""
    if sys.prefix == sys.base_prefix:  # no virtual environment: whatever 'python' is
        return "python"
    return reachable(Path(sys.executable))


def reachable(path: Path) -> str:
    """``path`` as a new shell at the working directory reaches it: relative when below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
