"""AllenNLP 2.10.1's ``_ElmoBiLm`` embedding the sentences of a file, timed (the reference side of
``python -m benchmarks.bilm_speed --allennlp-python .venv-conformance/bin/python``).

    .venv-conformance/bin/python benchmarks/conformance/allennlp_embed.py OPTIONS WEIGHTS SENTENCES OUT.npz \
        --batch-size 64 --threads 1 --repeats 2

Runs in the harness's environment only. Sentences (one per line, tokens separated by spaces) go in file
order in batches of ``--batch-size``, each padded to its longest sentence, as AllenNLP's ``Elmo`` does;
the biLM's state is reset before each round (``_ElmoBiLm`` is stateful). Prints one JSON line with each
round's seconds; ``OUT.npz`` holds the three layers of the first five sentences of the last round
(without the sentence boundaries), for the caller to compare with its own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from allennlp_launcher import install_stand_ins  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("options", help="the biLM's options.json")
    ap.add_argument("weights", help="the biLM's weights.hdf5")
    ap.add_argument("sentences", type=Path, help="one sentence per line, tokens separated by spaces")
    ap.add_argument("out", type=Path, help=".npz for the layers of the first five sentences")
    ap.add_argument("--batch-size", type=int, default=64, help="sentences per batch, in file order (default 64)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--repeats", type=int, default=2, help="rounds over all sentences; each is timed (default 2)")
    a = ap.parse_args(argv)
    install_stand_ins()
    import torch
    from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids

    torch.set_num_threads(a.threads)
    sentences = [line.split() for line in a.sentences.read_text(encoding="utf-8").splitlines() if line.strip()]
    bilm = _ElmoBiLm(a.options, a.weights, requires_grad=False)
    bilm.eval()
    rounds, kept = [], []
    for _ in range(a.repeats):
        bilm._elmo_lstm.reset_states()
        kept = []
        start = time.perf_counter()
        with torch.no_grad():
            for i in range(0, len(sentences), a.batch_size):
                batch = sentences[i : i + a.batch_size]
                out = bilm(batch_to_ids(batch))
                if i == 0:  # layers without <S> and </S>: [layer, token, dim]
                    kept = [
                        torch.stack([act[k, 1 : len(s) + 1] for act in out["activations"]]).numpy()
                        for k, s in enumerate(batch[:5])
                    ]
        rounds.append(time.perf_counter() - start)
    np.savez(a.out, *kept)
    print(json.dumps({"seconds": rounds, "threads": torch.get_num_threads(), "sentences": len(sentences)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
