"""Give run records written before records stored their identity (biLM, data and code hashes) that
identity, so that they are recognised as the runs they are (``run_records.migrate``); a record of a
run with a fine-tuned biLM (Peters et al. 2018 §3.4) gets the base biLM it was tuned from
(``runner.finetuned_base_sha256``). Apart from the two modules it joins, so neither imports the other.

    python -m tasks.record_migration DIR [DIR ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from suite_common.errors import SuiteError

from .run_records import migrate
from .runner import finetuned_base_sha256


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description="Run records: give records written before run identities existed "
        "their identity (biLM and data hashes, task version)."
    )
    ap.add_argument("roots", nargs="+", type=Path, help="directories searched for results.json / finetune.json")
    args = ap.parse_args(argv)
    try:
        done, current = migrate(args.roots, finetuned_base_sha256)
    except SuiteError as e:
        raise SystemExit(f"error: {e}") from None
    print(f"{done} records migrated, {current} already had their identity")


if __name__ == "__main__":
    main()
