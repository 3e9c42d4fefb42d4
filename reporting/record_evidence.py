"""What a run record must show of itself before any of its numbers reaches a table (Peters et al.
2018, Tables 1-3, 5-7 are rebuilt from records): checks made on the record's own content, which
the record cannot switch off by leaving a field out.

* its dev metric is a finite number (not a string, a boolean, NaN or infinity);
* its ``date`` is a date; its configuration names its task, and the same task as the record;
* its ``config_hash`` is what its configuration and identity give when recomputed (a stored hash
  is never taken on trust; a configuration that today's settings cannot describe keeps its own);
* a task run keeps its evidence: its per-epoch history, its dev predictions and the SHA-256 of the
  data files it read, so that ``rescoring`` and the history check test its number. The only records
  excused are those made before runs kept it, named by the SHA-256 of their bytes in the committed,
  frozen manifest ``results/pre_evidence_records.sha256``: what a record says of itself (its
  ``date``) never excuses it, and a listed record edited in any byte is no longer listed.

The limit of any such check: a record whose predictions, hashes, metric and history were all
rewritten consistently cannot be told from a real one without running its configuration again.
"""

from __future__ import annotations

import datetime
import math
from functools import cache
from pathlib import Path

from experiments.plan import record_digest
from experiments.record import Record
from suite_common.hashing import file_sha256
from tasks.registry import available, is_probe_function

from .per_record import per_record


def finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


MANIFEST_NAME = "results/pre_evidence_records.sha256"
PRE_EVIDENCE_MANIFEST = Path(__file__).resolve().parents[1] / MANIFEST_NAME


@cache
def pre_evidence_hashes() -> frozenset[str]:
    """The SHA-256 of every record made before runs kept their evidence (the manifest's first column)."""
    lines = PRE_EVIDENCE_MANIFEST.read_text().splitlines()
    return frozenset(line.split()[0] for line in lines if line.strip() and not line.startswith("#"))


def made_before_evidence(r: Record) -> bool:
    """Whether the record is one of the committed records made before runs kept their evidence: its file's
    bytes have a SHA-256 the manifest lists (a record read from no file never is)."""
    if r.path is None:
        return False
    try:
        return file_sha256(r.path) in pre_evidence_hashes()
    except OSError:
        return False


def _date(text) -> datetime.datetime | None:
    try:
        d = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=datetime.UTC)


@per_record
def evidence_differences(r: Record) -> dict[str, tuple]:
    """``{what: (what the record holds, what it must hold)}``; empty when the record shows what it must."""
    out: dict[str, tuple] = {}
    if r.task not in available():  # a name, never a path into the code
        return {"task": (r.task, "a task of tasks/")}
    if not isinstance(r.dev, dict):
        out["dev"] = (type(r.dev).__name__, "an object of metrics")
    elif not finite_number(r.value) and not r.is_probe:
        out[f"dev.{r.metric}"] = (repr(r.value), "a finite number")
    elif r.is_probe:
        layers = r.dev.get("accuracy_per_layer")
        if not isinstance(layers, dict) or not layers or not all(finite_number(v) for v in layers.values()):
            out["dev.accuracy_per_layer"] = ("not finite numbers per layer", "a finite number per layer")
    date = _date(r.date)
    if date is None:
        return {**out, "date": (r.date, "an ISO date")}
    name = (r.config.get("task") or {}).get("name") if isinstance(r.config.get("task"), dict) else None
    recent = not made_before_evidence(r)  # its own date excuses nothing
    if name is not None and name != r.task:
        out["config.task.name"] = (name, r.task)
    elif name is None and recent:
        out["config.task.name"] = (None, r.task)
    if name is not None:
        recomputed = record_digest(r.to_dict())
        if recomputed is not None and recomputed != r.config_hash:
            out["config_hash (recomputed from its configuration)"] = (r.config_hash, recomputed)
    if recent and r.is_probe and not is_probe_function(r.task):  # a probe trained as a task keeps its predictions
        dev = r.predictions.get("dev") if isinstance(r.predictions, dict) else None
        if not isinstance(dev, dict):
            out["predictions.dev"] = (None, f"kept by every probe trained as a task not listed in {MANIFEST_NAME}")
    if recent and not r.is_probe:  # a trained task model of the kept-evidence era
        if not isinstance(r.epochs, list) or not r.epochs or not r.best_epoch:
            out["epochs"] = ("no history" if not r.epochs else "no best epoch", "its per-epoch dev history")
        dev = r.predictions.get("dev") if isinstance(r.predictions, dict) else None
        if not isinstance(dev, dict):
            out["predictions.dev"] = (None, f"kept by every task run not listed in {MANIFEST_NAME}")
        if not r.data_hashes.get("dev"):
            out["identity.data_sha256"] = (r.data_hashes or None, "the SHA-256 of every data file read")
    return out
