"""``mode=embed_sample``: the biLM's representations (Peters et al. 2018 §3.1-3.2) of a sample of sentences (a
one-token-per-line file, by default CoNLL-2003's dev file) written to an HDF5 file, and the tokens embedded per
second, into ``embed_sample.out``."""

from __future__ import annotations

import json
import time
from pathlib import Path

from omegaconf import OmegaConf

from suite_common.atomic_files import write_text_atomic
from suite_common.bounded_files import data_file_problem
from suite_common.errors import ConfigError
from suite_common.typed_config import plain

from .plan import RunPlan


def embed_sample(run, out_dir: Path) -> None:
    """Embeds ``embed_sample.limit`` sentences of ``embed_sample.sentences`` into ``out_dir`` (``run``: the
    typed configuration, ``experiments.run_config.RunConfig``)."""
    from elmo_core import load_bilm
    from elmo_core.embed import embed_file
    from tasks.common.text_files import token_sentences

    out_dir.mkdir(parents=True, exist_ok=True)  # train and finetune write their configuration where they choose
    write_text_atomic(out_dir / "resolved_config.yaml", OmegaConf.to_yaml(OmegaConf.create(plain(run))))
    source = RunPlan.resolve(run).encoder  # the encoder as any run of this configuration builds it
    if source.kind != "bilm":
        raise ConfigError("mode=embed_sample embeds with the biLM (encoder=bilm)")
    bilm = load_bilm(source.options, source.weights, stateful=source.state != "stateless", device=run.device,
                     allow_extra=source.allow_extra)  # fmt: skip
    sample = run.embed_sample
    problem = data_file_problem(sample.sentences)
    if problem:
        raise ConfigError(f"embed_sample.sentences={sample.sentences}: {problem}")
    sentences = token_sentences(sample.sentences)[: sample.limit]
    text = out_dir / "sentences.txt"
    write_text_atomic(text, "\n".join(" ".join(s) for s in sentences) + "\n")
    start = time.perf_counter()
    n = embed_file(bilm, text, out_dir / "embeddings.hdf5", sample.batch_size)
    seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    report = {
        "biLM": source.identity(),
        "sentences": n,
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
        "output": str(out_dir / "embeddings.hdf5"),
    }
    write_text_atomic(out_dir / "embed_sample.json", json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
