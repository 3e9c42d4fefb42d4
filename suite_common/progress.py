"""Progress bars for the long loops of elmo_core: ``tqdm`` when it is installed, otherwise a silent
stand-in, so that elmo_core itself needs only torch, numpy and h5py."""

from __future__ import annotations

try:
    from tqdm import tqdm as progress_bar
except ImportError:  # pragma: no cover - exercised only where tqdm is absent

    class progress_bar:  # noqa: N801 - mirrors tqdm's name and the calls elmo_core makes
        def __init__(self, iterable=None, **_):
            self.iterable = iterable

        def __iter__(self):
            return iter(self.iterable)

        def update(self, *_):
            pass

        def set_postfix(self, *_, **__):
            pass

        def close(self):
            pass
