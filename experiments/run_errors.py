"""What a run that stops early says and leaves (the run machinery behind ``run.py``): a configuration, data or
weights error, a file that cannot be written or memory that ran out is one line for the user; a run stopped
or refused before it wrote anything leaves no directory, its claims released."""

from __future__ import annotations

import signal
from pathlib import Path

from suite_common.errors import WRITE_ERRNOS, SuiteError, storage_error

from .run_directories import release_claims, remove_if_unused, stopped_message


def one_line(e: Exception, out_dir: Path) -> str | None:
    """The user's one line for a configuration, data or weights error, a file that cannot be written (disk full,
    read-only, no permission) or memory that ran out; None for anything else (a programming error: the traceback
    is the report)."""
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


def leave_nothing(out_dir: Path, runs_root: Path, stopped: bool = False) -> str | None:
    """Releases this process's claims and removes the launch directory, and any ``<dir>@<digest>`` it was routed
    to, where nothing was written into them; for a run the user stopped, what the same command does next."""
    claimed = {out_dir, *release_claims()}
    message = stopped_message(claimed) if stopped else None
    for directory in claimed:
        remove_if_unused(directory, runs_root)
    return message


class CtrlCWatch:
    """Notes whether Ctrl-C (SIGINT) reached this process while the ``with`` block ran. Python's handler raises
    ``KeyboardInterrupt`` wherever the main thread is; where that is inside a library that turns it into its
    own error (OmegaConf, interrupted while it builds a config, raises ``ConfigKeyError``), ``seen`` still
    tells a stop by the user from a crash. A handler someone else installed is left alone."""

    def __init__(self):
        self.seen = False
        self._before = None

    def _note_and_interrupt(self, signum, frame):
        self.seen = True
        signal.default_int_handler(signum, frame)

    def __enter__(self) -> CtrlCWatch:
        self._before = signal.getsignal(signal.SIGINT)
        if self._before is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._note_and_interrupt)
        return self

    def __exit__(self, *exc) -> None:
        if self._before is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._before)
