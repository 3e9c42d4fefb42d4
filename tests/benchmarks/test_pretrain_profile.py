"""``benchmarks.pretrain_speed --profile``: every part of a fast update lands in its own row, and the matrix
products the profiler saw add up to the FLOPs the benchmark counts for that update from the model's sizes."""

import torch
from conftest import shared_path

from benchmarks.pretrain_speed import SHIPPED_VOCAB, fresh_model, profile_fast_step, update_flops
from elmo_core.pretraining.lm_data import LMStream, Vocabulary


def test_the_profile_puts_each_part_of_an_update_in_its_row_and_counts_the_updates_products():
    files, vocab = [shared_path("data/fixtures/bilm_tf_train/data.txt")], Vocabulary.load(SHIPPED_VOCAB)
    threads = torch.get_num_threads()
    profiled = profile_fast_step("small", vocab, files, 8, 1)
    assert torch.get_num_threads() == threads  # put back after its one-thread run
    parts = profiled["parts"]
    for name in (
        "char CNN forward",
        "char CNN backward",
        "LSTMs forward",
        "LSTMs backward",
        "softmax (head and tails)",
    ):
        assert parts[name]["products_s"] > 0 and parts[name]["flops"] > 0 and parts[name]["other_s"] > 0, name
    assert parts["clip and optimizer"]["other_s"] > 0 and parts["clip and optimizer"]["flops"] == 0
    assert parts["rest"]["flops"] == 0  # every product of the step is inside a named part
    # the profiled update is the stream's third batch (one warm-up, one timed without the profiler)
    batch = [b for _, b in zip(range(3), LMStream(files, vocab, 8, 20, seed=0).batches(0))][2]
    counted = update_flops(fresh_model("small", vocab, "cpu"), batch, True)
    seen = sum(p["flops"] for p in parts.values())
    # counted from the sizes, 3x the forward pass; the profiler also sees the LSTMs' bias column in the
    # input product and the narrow softmax tails' transposing product: a few per cent at most
    assert abs(seen / counted - 1) < 0.03
    assert profiled["seconds_per_update"] > 0
