"""The biLM's training batches (Peters et al. 2018, §3.1) assembled in worker processes.

Assembling a batch (characters and targets of both streams) is Python work of about 3.5 µs per
token. On a GPU that is slower than the training step itself, so ``prefetched_batches`` hands the
assembly to ``workers`` processes through ``torch.utils.data.DataLoader``: worker k assembles the
batches k, k + n, k + 2n, ... of the epoch, and the loader takes them from the workers in turn, so
the order is exactly that of ``LMStream.batches`` (a resumed run skips the same batches).
With ``workers=0`` it is ``LMStream.batches`` itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .lm_data import LMBatch, LMStream


class _EpochBatches(IterableDataset):
    def __init__(self, stream: LMStream, epoch: int, skip: int):
        self.stream, self.epoch, self.skip = stream, epoch, skip

    def __iter__(self) -> Iterator[LMBatch]:
        info = get_worker_info()
        shard = (0, 1) if info is None else (info.id, info.num_workers)
        return self.stream.batches(self.epoch, self.skip, shard)


def _as_is(batch: LMBatch) -> LMBatch:
    return batch


def prefetched_batches(stream: LMStream, epoch: int, skip: int = 0, workers: int = 0) -> Iterator[LMBatch]:
    """``stream.batches(epoch, skip)``, the same batches in the same order, assembled ahead by
    ``workers`` processes (each keeps up to 4 batches ready)."""
    if workers <= 0:
        return stream.batches(epoch, skip)
    loader = DataLoader(
        _EpochBatches(stream, epoch, skip),
        batch_size=None,
        num_workers=workers,
        collate_fn=_as_is,
        prefetch_factor=4,
    )
    return iter(loader)
