"""What an AllenNLP 2.10 user runs to embed a file with ELMo (Peters et al. 2018 §3.2): AllenNLP 2.10 has no
``elmo`` command (0.9's is gone), so its users write a short script like this one around ``_ElmoBiLm`` and
``batch_to_ids``, in file-order batches (64, the old command's default), writing the old command's HDF5
layout: one dataset per line index holding the three layers (3, tokens, dim), and ``sentence_to_index``.

    .venv-conformance/bin/python benchmarks/conformance/allennlp_embed_file.py OPTIONS WEIGHTS INPUT OUTPUT.hdf5 \
        --batch-size 64 --threads 1

The whole-process side of ``python -m benchmarks.embed_whole_process``; runs in the harness's environment only
(``make conformance-env``). Prints one JSON line on stderr with the seconds of each phase: importing, loading
the biLM, the batches, writing.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from allennlp_launcher import install_stand_ins  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("options", help="the biLM's options.json")
    ap.add_argument("weights", help="the biLM's weights.hdf5")
    ap.add_argument("input", type=Path, help="one tokenized sentence per line")
    ap.add_argument("output", type=Path, help="the HDF5 file to write")
    ap.add_argument("--batch-size", type=int, default=64, help="sentences per batch, in file order (default 64)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    a = ap.parse_args(argv)
    install_stand_ins()
    import h5py
    import torch
    from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids

    torch.set_num_threads(a.threads)
    phases = {"import": time.perf_counter() - STARTED}
    start = time.perf_counter()
    lines = a.input.read_text(encoding="utf-8").splitlines()
    bilm = _ElmoBiLm(a.options, a.weights, requires_grad=False)
    bilm.eval()
    phases["load"] = time.perf_counter() - start
    start, embedded = time.perf_counter(), []
    with torch.no_grad():
        for i in range(0, len(lines), a.batch_size):
            batch = [line.split() for line in lines[i : i + a.batch_size]]
            out = bilm(batch_to_ids(batch))
            layers = torch.stack(out["activations"], dim=1)  # (batch, 3, tokens + 2, dim) with <S> and </S>
            embedded += [layers[k, :, 1 : len(s) + 1].numpy() for k, s in enumerate(batch)]
    phases["batches"] = time.perf_counter() - start
    start = time.perf_counter()
    with h5py.File(a.output, "w") as f:
        for i, layers in enumerate(embedded):
            f.create_dataset(str(i), data=layers)
        index = {line.strip(): str(i) for i, line in enumerate(lines)}
        f.create_dataset("sentence_to_index", data=[json.dumps(index)], dtype=h5py.string_dtype())
    phases["write"] = time.perf_counter() - start
    print(json.dumps({"phases": phases, "sentences": len(lines), "threads": torch.get_num_threads()}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
