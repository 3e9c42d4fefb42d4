"""Give run records written before records stored their identity (biLM, data and code hashes) that
identity, so that they are recognised as the runs they are (``migrate``); a record of a
run with a fine-tuned biLM (Peters et al. 2018 §3.4) gets the base biLM it was tuned from
(``runner.finetuned_base_sha256``).

    python -m experiments.record_migration DIR [DIR ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from suite_common.errors import SuiteError

from .identity import legacy_identity, run_digest
from .run_directories import RECORD_NAMES, read_record, write_json_atomic


def migrate(roots: list[Path], finetuned_base=None) -> tuple[int, int]:
    """Give every record below ``roots`` its identity (``legacy_identity``) and digest (the digest it
    had before is kept as ``config_hash_before_identity``); records with an identity get their digest
    recomputed. Returns (rewritten, already current)."""
    from suite_common.errors import DataError

    done = current = 0
    for root in roots:
        for path in sorted(p for name in RECORD_NAMES for p in Path(root).glob(f"**/{name}")):
            record = read_record(path)
            if record is None:
                raise DataError(f"{path}: not a JSON record")
            if "identity" in record:
                digest = run_digest(record["config"], record["identity"])
                if record.get("config_hash") == digest:
                    current += 1
                    continue
                record = {**record, "config_hash": digest}  # the identity rules changed since it was written
                write_json_atomic(path, record)
                done += 1
                continue
            identity = legacy_identity(record, finetuned_base)
            if identity is None:
                raise DataError(
                    f"{path}: the data files its configuration names (or, for a fine-tuned biLM, "
                    "its base biLM) are not here; cannot migrate"
                )
            record = {
                **record,
                "identity": identity,
                "config_hash_before_identity": record.get("config_hash"),
                "config_hash": run_digest(record["config"], identity),
            }
            write_json_atomic(path, record)
            done += 1
    return done, current


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description="Run records: give records written before run identities existed "
        "their identity (biLM and data hashes, task version)."
    )
    ap.add_argument("roots", nargs="+", type=Path, help="directories searched for results.json / finetune.json")
    args = ap.parse_args(argv)
    try:
        from .runner import finetuned_base_sha256

        done, current = migrate(args.roots, finetuned_base_sha256)
    except SuiteError as e:
        raise SystemExit(f"error: {e}") from None
    print(f"{done} records given their identity or today's digest, {current} already current")


if __name__ == "__main__":
    main()
