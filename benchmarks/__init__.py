"""Speed and cost on this machine (the biLM, pretraining, the cache, the paper profile's scale) and
the coreference scorer check; the tables and figures are in ``reporting``. ``SHARED``: the shared
data beside the repository, or ``$ELMO_SHARED`` (as the tests and ``conf/`` read it)."""

import os
from pathlib import Path

SHARED = Path(os.environ.get("ELMO_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
