"""Where a run's contextual layers come from (Peters et al. 2018 §3.2-3.4): a frozen biLM in the
original format — the embedded one, one given by ``elmo.options``/``elmo.weights``, or either of
them fine-tuned on the task's training text first (§3.4, ``elmo.finetune``).

``BiLMSource`` is that choice as one object: its files and identity (SHA-256 of the weights, as
every record stores it), the shape of its layers for the task's ELMo mixes, and the layer
sources of a task's splits (cached on disk, or live per batch with ``elmo.cache=false``).
``BiLMLayers`` is the biLM as the activation cache's ``Encoder``: its state policy (stateless;
stateful with states carried across batches in file order, as the original; stateful after a
warm-up of the data's first batches) and its pass over a dataset.
"""
from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import torch

from elmo_core import batch_to_ids, file_sha256, load_bilm, read_options
from elmo_core.embed import embed_sentences
from suite_common.errors import ConfigError, WeightsError

from .activation_cache import ActivationCache, LayerSource

STATE_POLICIES = ("stateless", "stateful", "stateful_warmup")


class LiveLayers:
    """Runs the biLM per batch (``elmo.cache=false``); its carried state, if stateful, follows the batches."""

    def __init__(self, bilm, sentences: list[list[str]]):
        self.bilm, self.sentences = bilm, sentences

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            out = self.bilm(batch_to_ids([self.sentences[i] for i in indices]).to(self.bilm.bos_ids.device))
        return out.layers.clone().cpu(), out.mask.clone().cpu()


class BiLMLayers:
    """The biLM of ``options_file`` + ``weight_file`` as an ``Encoder`` of the activation cache."""

    def __init__(self, options_file: str | Path, weight_file: str | Path, state: str = "stateless",
                 batch_size: int = 64, device: str = "cpu", warmup_batches: int = 0, allow_extra: bool = False):
        if state not in STATE_POLICIES:
            raise ConfigError(f"elmo.state must be one of {STATE_POLICIES}, got {state!r}")
        self.options_file, self.weight_file = Path(options_file), Path(weight_file)
        self.state, self.batch_size, self.device, self.allow_extra = state, batch_size, device, allow_extra
        self.warmup_batches = warmup_batches if state == "stateful_warmup" else 0
        self.bilm_sha256, self.options_sha256 = file_sha256(self.weight_file), file_sha256(self.options_file)
        self._bilm = None

    def cache_identity(self) -> list:
        # stateful activations depend on the batch layout (and the warm-up); stateless ones do not
        state = "stateless" if self.state == "stateless" else f"{self.state}-b{self.batch_size}-w{self.warmup_batches}"
        return ["bilm", self.bilm_sha256, self.options_sha256, state]

    def layer_shape(self) -> tuple[int, int]:
        opts = read_options(self.options_file)
        return opts.n_layers + 1, 2 * opts.projection_dim

    def meta(self) -> dict:
        return {"encoder": "bilm", "state": self.state, "warmup_batches": self.warmup_batches,
                "bilm_sha256": self.bilm_sha256, "options_sha256": self.options_sha256}

    def model(self):
        if self._bilm is None:
            self._bilm = load_bilm(self.options_file, self.weight_file, stateful=self.state != "stateless",
                                   device=self.device, allow_extra=self.allow_extra)
        return self._bilm

    def embed(self, sentences: list[list[str]], name: str):
        bilm = self.model()
        bilm.reset_state()
        for start in range(0, min(self.warmup_batches * self.batch_size, len(sentences)), self.batch_size):
            with torch.inference_mode():  # warm-up: run the data's first batches, keep only the states
                bilm(batch_to_ids(sentences[start: start + self.batch_size]).to(bilm.bos_ids.device))
            ActivationCache.encoder_passes += 1
        print(f"biLM pass over {name}: {len(sentences)} sentences, {sum(map(len, sentences))} tokens", file=sys.stderr)
        yield from embed_sentences(bilm, sentences, self.batch_size, progress=True)
        ActivationCache.encoder_passes += -(-len(sentences) // self.batch_size)

    def live(self, sentences: list[list[str]]) -> LayerSource:
        return LiveLayers(self.model(), sentences)


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

    def encoder(self, cfg) -> BiLMLayers:
        return BiLMLayers(self.options, self.weights, state=cfg.elmo.state, batch_size=cfg.elmo.batch_size,
                          device=cfg.device, warmup_batches=cfg.elmo.warmup_batches, allow_extra=self.allow_extra)

    def cache(self, cfg) -> ActivationCache:
        return ActivationCache(cfg.elmo.cache_dir, self.encoder(cfg), dtype=cfg.elmo.cache_dtype)

    def layer_source(self, cfg, sentences: list[list[str]], name: str) -> LayerSource:
        """The layers of ``sentences``: from the activation cache, or computed per batch."""
        if cfg.elmo.cache:
            return self.cache(cfg).get(sentences, name)
        if cfg.elmo.state not in ("stateless", "stateful"):
            raise ConfigError(f"elmo.state={cfg.elmo.state} needs elmo.cache=true (the warm-up runs while caching)")
        return self.encoder(cfg).live(sentences)

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
