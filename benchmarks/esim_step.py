"""Where an ESIM training step's time goes (the paper's SNLI model, appendix A.3), against the machine's
matrix-product peak measured in the same run: the SICK baseline's epoch is as fast as the arithmetic it does.

    python -m benchmarks.esim_step [--threads 1] [--steps 30] [--hidden 300]

Batches of 32 SICK training pairs in file order (their real lengths; word ids drawn at random), the baseline's
head at the paper profile's sizes (100-d words, 300-d LSTMs and layers, dropout 0.5), one Adam step each. The
arithmetic is what ``torch.utils.flop_counter`` counts in each step's forward and backward pass (an untimed
pass of the same batch). Prints the step time, the counted GFLOP/s and its fraction of the float32 GEMM peak.
"""

from __future__ import annotations

import argparse
import csv
import time
from types import SimpleNamespace

import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import SHARED
from benchmarks.bilm_speed import matmul_peak_flops
from tasks.nli.config import NliModelConfig
from tasks.nli.model import Esim

SICK_TRAIN = SHARED / "data/nli_sick/train.tsv"


class NoElmo(torch.nn.Module):
    """The baseline's features: nothing added at the input or the output."""

    input_dim = output_dim = 0

    def forward(self, batch):
        return {}

    def add_input(self, x, elmo):
        return x

    def add_output(self, x, elmo):
        return x


def side(lengths: list[int], vocabulary: int) -> dict:
    n = max(lengths)
    mask = torch.arange(n).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    words = torch.randint(2, vocabulary, mask.shape) * mask
    return {"mask": mask, "word_ids": words, "char_ids": torch.zeros(*mask.shape, 1, dtype=torch.long)}


def counted_flops(model: Esim, inputs: dict) -> float:
    """The FLOPs of one forward and backward pass, as torch's own counter counts the operations run."""
    with FlopCounterMode(display=False) as counter:
        model.loss_of(model.scores(inputs), inputs).backward()
    model.zero_grad()
    return float(counter.get_total_flops())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--steps", type=int, default=30, help="timed steps (default 30, after 3 untimed)")
    ap.add_argument("--hidden", type=int, default=300, help="LSTM and layer width (default 300, the paper's)")
    ap.add_argument("--word-dim", type=int, default=100, help="word embedding width (default 100)")
    ap.add_argument(
        "--peak-seconds",
        type=float,
        default=3.0,
        help="seconds of the float32 matmul run that measures the machine's peak (default 3)",
    )
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    with SICK_TRAIN.open(encoding="utf-8") as f:
        pairs = [
            (len(r["sentence_A"].split()), len(r["sentence_B"].split())) for r in csv.DictReader(f, delimiter="\t")
        ]
    vocabulary = 2500
    cfg = SimpleNamespace(model=NliModelConfig(word_dim=a.word_dim, hidden=a.hidden))
    model = Esim([f"w{i}" for i in range(vocabulary)], 3, cfg, NoElmo()).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=4e-4)
    batches = [pairs[i : i + 32] for i in range(0, 32 * (a.steps + 3), 32)]
    flops, seconds = 0.0, 0.0
    for k, batch in enumerate(batches):
        premise, hypothesis = [p for p, _ in batch], [h for _, h in batch]
        inputs = {"premise": side(premise, vocabulary), "hypothesis": side(hypothesis, vocabulary)}
        inputs["label"] = torch.randint(0, 3, (len(batch),))
        if k >= 3:
            flops += counted_flops(model, inputs)
        start = time.perf_counter()
        loss = model.loss_of(model.scores(inputs), inputs)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        if k >= 3:
            seconds += time.perf_counter() - start
    peak = matmul_peak_flops(a.peak_seconds)
    rate = flops / seconds
    print(f"threads {a.threads}; {a.steps} steps of 32 SICK pairs; hidden {a.hidden}, words {a.word_dim}-d")
    print(f"step: {1000 * seconds / a.steps:.1f} ms; counted arithmetic {rate / 1e9:.1f} GFLOP/s")
    print(
        f"float32 GEMM peak (measured now): {peak / 1e9:.1f} GFLOP/s; the step runs at {100 * rate / peak:.1f} % of it"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
