"""How a side report of the tables (Peters et al. 2018's settings examined one at a time) ends: its Markdown
printed, and written complete or not at all to ``--out`` when one is given."""

from __future__ import annotations

from pathlib import Path

from suite_common.atomic_files import write_text_atomic


def emit(text: str, out: Path | None) -> None:
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(Path(out), text)
    print(text)
