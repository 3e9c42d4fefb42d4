"""Where a run's contextual layers come from (Peters et al. 2018 §3.2-3.4): a frozen biLM in the
original format — the embedded one, one given by ``elmo.options``/``elmo.weights``, or either of
them fine-tuned on the task's training text first (§3.4, ``elmo.finetune``).

``BiLMSource`` is that choice as one object: its files and identity (SHA-256 of the weights, as
every record stores it), the shape of its layers for the task's ELMo mixes, and the layer
sources of a task's splits (cached on disk, or live per batch with ``elmo.cache=false``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from elmo_core import file_sha256, load_bilm, read_options
from elmo_core.errors import ConfigError, WeightsError

from .activation_cache import ActivationCache, LayerSource, LiveLayers


def finetune_key(base_sha256: str, train_text: str, dev_text: str, epochs: int) -> str:
    """The name of a fine-tuned biLM's directory: the base weights, the text and the epochs."""
    return hashlib.sha256(json.dumps([base_sha256, train_text, dev_text, epochs]).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BiLMSource:
    options: Path
    weights: Path
    kind: str = "embedded"  # embedded | given | finetuned
    finetune_report: dict | None = field(default=None, compare=False)
    allow_extra: bool = False  # datasets the options do not use are ignored instead of an error

    @classmethod
    def from_config(cls, elmo_cfg) -> "BiLMSource":
        """``elmo.options`` + ``elmo.weights``, or the embedded biLM when neither is given."""
        from elmo_core.pretrained import model_dir
        if elmo_cfg.options or elmo_cfg.weights:
            if not (elmo_cfg.options and elmo_cfg.weights):
                raise ConfigError("give both elmo.options and elmo.weights (or neither, for the embedded biLM)")
            return cls(Path(elmo_cfg.options), Path(elmo_cfg.weights), "given",
                       allow_extra=bool(elmo_cfg.get("allow_extra_weights", False)))
        try:
            d = model_dir("small")
        except FileNotFoundError as e:
            raise ConfigError(f"{e}; pass elmo.options=... elmo.weights=...") from None
        return cls(d / "options.json", d / "weights.hdf5", "embedded")

    @cached_property
    def sha256(self) -> str:
        return file_sha256(self.weights)

    def identity(self) -> dict:
        """What a record stores about the biLM."""
        return {"options": str(self.options), "weights": str(self.weights), "sha256": self.sha256}

    def layer_shape(self) -> tuple[int, int]:
        """(number of layers L+1, dimension 2·projection_dim) of the activations."""
        opts = read_options(self.options)
        return opts.n_layers + 1, 2 * opts.projection_dim

    def load(self, cfg):
        return load_bilm(self.options, self.weights, stateful=cfg.elmo.state == "stateful", device=cfg.device,
                         allow_extra=self.allow_extra)

    def cache(self, cfg) -> ActivationCache:
        return ActivationCache(cfg.elmo.cache_dir, self.options, self.weights, state=cfg.elmo.state,
                               batch_size=cfg.elmo.batch_size, dtype=cfg.elmo.cache_dtype, device=cfg.device,
                               warmup_batches=cfg.elmo.warmup_batches, allow_extra=self.allow_extra)

    def layer_source(self, cfg, sentences: list[list[str]], name: str) -> LayerSource:
        """The layers of ``sentences``: from the activation cache, or computed per batch."""
        if cfg.elmo.cache:
            return self.cache(cfg).get(sentences, name)
        if cfg.elmo.state not in ("stateless", "stateful"):
            raise ConfigError(f"elmo.state={cfg.elmo.state} needs elmo.cache=true (the warm-up runs while caching)")
        return LiveLayers(self.load(cfg), sentences)

    def finetuned(self, cfg, train_text: str, dev_text: str, task_name: str) -> "BiLMSource":
        """§3.4 / Table 7: this biLM trained further on a task's text (labels ignored) for
        ``elmo.finetune_epochs``, then frozen. Kept under ``<cache_dir>/../finetuned/<hash>`` keyed
        by the weights and the text, so every run (and seed) on the same data shares it."""
        from elmo_core.pretrain import finetune
        if not (self.options.parent / "vocab.txt").exists():
            raise WeightsError(f"elmo.finetune needs the biLM's vocab.txt and softmax beside {self.options} "
                               "(models exported by elmo_core.pretrain have them)")
        key = finetune_key(self.sha256, train_text, dev_text, cfg.elmo.finetune_epochs)
        out = Path(cfg.elmo.cache_dir).parent / "finetuned" / key
        summary_path = out / "summary.json"
        if not (summary_path.exists() and json.loads(summary_path.read_text())["progress"].get("finished")):
            out.mkdir(parents=True, exist_ok=True)
            (out / "task_train.txt").write_text(train_text, encoding="utf-8")
            (out / "task_dev.txt").write_text(dev_text, encoding="utf-8")
            print(f"fine-tuning the biLM on {task_name} training text -> {out}", flush=True)
            finetune(self.options.parent, out / "task_train.txt", out / "task_dev.txt", out,
                     epochs=cfg.elmo.finetune_epochs, seed=0, device=cfg.device)
        summary = json.loads(summary_path.read_text())
        report = {"dir": str(out), "dev_perplexity_before": summary["heldout_perplexity_before"]["average"],
                  "dev_perplexity_after": summary["heldout_perplexity"]["average"],
                  "tokens": summary["progress"]["tokens"]}
        return BiLMSource(out / "options.json", out / "weights.hdf5", "finetuned", report)
