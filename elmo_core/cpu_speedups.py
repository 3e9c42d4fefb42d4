"""CPU helpers for biLM inference (§3.4's model is large: 4096-cell LSTMs with 512 projections).

* ``StepProduct``: ``h @ w + b`` for the recurrent weight of an LSTM step loop, with the weight
  pre-packed in MKL's GEMM layout for the loop's row count.
* ``run_side_by_side``: the forward and backward LSTMs run at the same time, each on its share of
  the intra-op threads (they are independent until their outputs are joined).

Both give the same numbers as the plain operations up to float rounding; tests compare them.
"""

from __future__ import annotations

import threading

import torch


def _mkl_packed_gemm_available() -> bool:
    try:
        return (
            torch.backends.mkl.is_available()
            and hasattr(torch.ops.mkl, "_mkl_linear")
            and hasattr(torch.ops.mkl, "_mkl_reorder_linear_weight")
        )
    except (AttributeError, RuntimeError):
        return False


MKL_PACKED = _mkl_packed_gemm_available()
MIN_PACK_ROWS = 32  # below this, MKL's packed product is no faster than the plain one


class StepProduct:
    """``h @ w + bias`` without autograd, for a weight used at every step of a loop.

    On CPU with MKL and at least ``MIN_PACK_ROWS`` rows, the weight is also kept in MKL's packed
    GEMM layout for the loop's usual row count ``full_rows`` (about 1.25x faster on the paper
    model's 64 x 512 x 16384 step product); a step with fewer rows (a row that ran out of
    sentences) uses ``addmm``. The packed copy is rebuilt when the weight changes (new storage or
    an in-place update) or the row count does. Elsewhere (GPU, other dtypes) it is ``addmm``.
    """

    def __init__(self):
        self._key = None
        self._packed: torch.Tensor | None = None

    def __call__(self, h: torch.Tensor, w: torch.Tensor, full_rows: int, bias: torch.Tensor) -> torch.Tensor:
        if (
            not MKL_PACKED
            or w.device.type != "cpu"
            or w.dtype != torch.float32
            or full_rows < MIN_PACK_ROWS
            or h.shape[0] != full_rows
            or w.is_inference()
        ):
            # (an inference-mode weight has no version counter to tell when it changes)
            return torch.addmm(bias, h, w)
        key = (w.data_ptr(), w._version, tuple(w.shape), full_rows)
        if self._key != key:
            self._packed = None  # free the old copy first
            self._packed = torch.ops.mkl._mkl_reorder_linear_weight(w.detach().t().contiguous(), full_rows)
            self._key = key
        return torch.ops.mkl._mkl_linear(h.contiguous(), self._packed, w.detach().t(), bias, full_rows)


def run_side_by_side(first, second):
    """Run two independent CPU computations at once, splitting the intra-op threads between them
    (torch operators release the GIL); returns both results, re-raising either's exception."""
    total = torch.get_num_threads()
    shares = (max(1, total - total // 2), max(1, total // 2))
    results, errors = [None, None], [None, None]
    # autograd modes are per thread: the helper thread must run under the caller's
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def work(k, fn):
        try:
            torch.set_num_threads(shares[k])  # this thread's own intra-op pool size
            with torch.inference_mode(inference), torch.set_grad_enabled(grad):
                results[k] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors[k] = e

    helper = threading.Thread(target=work, args=(1, second), daemon=True)
    try:
        helper.start()
        work(0, first)
        helper.join()
    finally:
        torch.set_num_threads(total)
    for e in errors:
        if e is not None:
            raise e
    return results
