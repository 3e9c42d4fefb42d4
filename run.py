"""Entry point of the suite (Hydra): ``python run.py mode=<mode> [overrides]``.

Modes so far:
  demo   embed real sentences (CoNLL-2003 dev by default) with the default biLM, write the layer
         activations to the run directory, and report speed and the biLM's identity.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf


def resolve_bilm(cfg: DictConfig) -> tuple[Path, Path]:
    from elmo_core.pretrained import model_dir
    if cfg.elmo.options or cfg.elmo.weights:
        if not (cfg.elmo.options and cfg.elmo.weights):
            raise SystemExit("error: give both elmo.options and elmo.weights (or neither, for the embedded biLM)")
        return Path(cfg.elmo.options), Path(cfg.elmo.weights)
    try:
        d = model_dir("small")
    except FileNotFoundError as e:
        raise SystemExit(f"error: {e}; pass elmo.options=... elmo.weights=...") from None
    return d / "options.json", d / "weights.hdf5"


def demo(cfg: DictConfig, out_dir: Path) -> None:
    from elmo_core import file_sha256, load_bilm
    from elmo_core.embed import embed_file

    options, weights = resolve_bilm(cfg)
    bilm = load_bilm(options, weights, stateful=cfg.elmo.stateful, device=cfg.device)
    source = Path(cfg.demo.sentences)
    if not source.exists():
        raise SystemExit(f"error: {source} not found (set demo.sentences=... or ELMO_SHARED)")
    sentences = []
    for line in source.read_text(encoding="utf-8").splitlines():  # CoNLL columns -> one sentence per line
        if not line.strip() or line.startswith("-DOCSTART-"):
            if sentences and sentences[-1]:
                sentences.append([])
            continue
        if not sentences:
            sentences.append([])
        sentences[-1].append(line.split()[0])
    sentences = [s for s in sentences if s][: cfg.demo.limit]
    text = out_dir / "sentences.txt"
    text.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    start = time.perf_counter()
    n = embed_file(bilm, text, out_dir / "embeddings.hdf5", cfg.demo.batch_size)
    seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    report = {"biLM": {"options": str(options), "weights": str(weights), "sha256": file_sha256(weights)},
              "sentences": n, "tokens": tokens, "seconds": round(seconds, 2),
              "tokens_per_s": round(tokens / seconds, 1), "output": str(out_dir / "embeddings.hdf5")}
    (out_dir / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    out_dir = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    modes = {"demo": demo}
    if cfg.mode not in modes:
        raise SystemExit(f"error: unknown mode {cfg.mode!r} (available: {', '.join(modes)})")
    (out_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    modes[cfg.mode](cfg, out_dir)


if __name__ == "__main__":
    main()
