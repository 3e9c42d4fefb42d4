"""The one place the suite reaches into Hydra's private API.

Hydra (1.3) has no public way to read its own command-line flags (``-m``, ``--cfg job``, ``--info``, ...)
apart from the overrides: ``hydra.main`` parses ``sys.argv`` itself, with the parser ``hydra._internal.utils.
get_args_parser`` builds. The suite must read the command line before that (to check every override and
output folder before Hydra makes a directory, and to put the overrides before the flags so that any placement
of ``-m`` means the same), so it asks that same parser here, and nowhere else. The overrides themselves go
through Hydra's public ``OverridesParser`` (``experiments.command_line``). If a Hydra release moves the
parser, this module is the one to change; the suite pins ``hydra-core`` in its lock."""

from __future__ import annotations

import argparse
import contextlib
import io


def hydra_flags(argv: list[str], intermixed: bool = True) -> argparse.Namespace | None:
    """Hydra's reading of ``argv`` (``overrides``, ``multirun``, ``cfg``, ``info``, ...), its arguments read
    intermixed (or, ``intermixed=False``, as ``hydra.main`` reads them: the overrides one run of positional
    arguments); None when Hydra's parser refuses them (its own error then says what is wrong)."""
    from hydra._internal.utils import get_args_parser

    parser = get_args_parser()
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return parser.parse_intermixed_args(argv) if intermixed else parser.parse_args(argv)
    except SystemExit:
        return None
