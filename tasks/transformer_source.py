"""A frozen Transformer (BERT and kin, Devlin et al. 2019) as the source of a run's contextual
layers, in place of the biLM (Peters et al. 2018 §3.2-3.3 apply unchanged: the task's ELMo mixes
weight the encoder's L+1 layers — the embedding output and every hidden layer — at the input and/or
output of the task model).

``TransformerSource`` mirrors ``BiLMSource``: its files and identity (one SHA-256 over the model's
weights, configuration and tokenizer files), the shape of its layers, and the layer sources of a
task's splits, through the same activation cache (keyed by the model's files, the word pooling and
the window length) or live per batch. ``encoder.model`` is a local ``save_pretrained`` directory
or a hub name (through the local Hugging Face cache); null means the embedded small BERT.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from suite_common.errors import ConfigError

from .activation_cache import ActivationCache, EmbeddedLayers, LayerSource


class TransformerLayers:
    """A Transformer model directory as an ``Encoder`` of the activation cache."""

    def __init__(self, model_dir: Path, sha256: str, pooling: str, max_length: int | None, batch_size: int,
                 device: str = "cpu"):
        self.model_dir, self.sha256, self.pooling = model_dir, sha256, pooling
        self.max_length, self.batch_size, self.device = max_length, batch_size, device
        self._encoder = None

    def word_encoder(self):
        if self._encoder is None:
            from bert_core.word_layers import TransformerWordEncoder
            self._encoder = TransformerWordEncoder(self.model_dir, self.pooling, self.max_length, self.device)
        return self._encoder

    def cache_identity(self) -> list:
        return ["transformer", self.sha256, self.pooling, self.max_length]

    def layer_shape(self) -> tuple[int, int]:
        return layer_shape_of(self.model_dir)

    def meta(self) -> dict:
        return {"encoder": "transformer", "model_sha256": self.sha256, "pooling": self.pooling,
                "max_length": self.max_length}

    def embed(self, sentences: list[list[str]], name: str | None):
        encoder = self.word_encoder()
        if name is not None:
            print(f"Transformer pass over {name}: {len(sentences)} sentences, {sum(map(len, sentences))} words",
                  file=sys.stderr)
        yield from encoder.embed_sentences(sentences, self.batch_size, progress=name is not None)
        ActivationCache.encoder_passes += -(-len(sentences) // self.batch_size)

    def live(self, sentences: list[list[str]]) -> LayerSource:
        return EmbeddedLayers(self, sentences)


def layer_shape_of(model_dir: Path) -> tuple[int, int]:
    """(L+1, hidden) from the model's config.json, without loading the weights."""
    from suite_common.errors import EncoderError
    try:
        config = json.loads((model_dir / "config.json").read_text())
        return int(config["num_hidden_layers"]) + 1, int(config["hidden_size"])
    except (OSError, ValueError, KeyError) as e:
        raise EncoderError(f"{model_dir / 'config.json'}: no num_hidden_layers/hidden_size ({type(e).__name__})") from None


@dataclass(frozen=True)
class TransformerSource:
    model: str        # as configured (a directory or a hub name)
    model_dir: Path   # where its files are
    pooling: str = "first"
    max_length: int | None = None
    batch_size: int = 32
    kind: str = "transformer"
    finetune_report = None  # no §3.4 fine-tuning for a Transformer here

    @classmethod
    def from_config(cls, encoder_cfg) -> "TransformerSource":
        from bert_core.word_layers import resolve_model_dir
        model = encoder_cfg.get("model")
        if not model:
            from bert_core.pretrained import model_dir
            try:
                model = str(model_dir("small"))
            except FileNotFoundError as e:
                raise ConfigError(f"{e}; pass encoder.model=DIR") from None
        return cls(str(model), resolve_model_dir(str(model), encoder_cfg.get("revision")),
                   encoder_cfg.get("pooling", "first"), encoder_cfg.get("max_length"), encoder_cfg.get("batch_size", 32))

    @cached_property
    def sha256(self) -> str:
        from bert_core.word_layers import model_files_sha256
        return model_files_sha256(self.model_dir)

    def identity(self) -> dict:
        """What a record stores about the encoder."""
        return {"kind": "transformer", "model": self.model, "model_dir": str(self.model_dir), "sha256": self.sha256,
                "pooling": self.pooling, "max_length": self.max_length}

    def layer_shape(self) -> tuple[int, int]:
        return layer_shape_of(self.model_dir)

    def encoder(self, cfg) -> TransformerLayers:
        return TransformerLayers(self.model_dir, self.sha256, self.pooling, self.max_length, self.batch_size, cfg.device)

    def cache(self, cfg) -> ActivationCache:
        return ActivationCache(cfg.elmo.cache_dir, self.encoder(cfg), dtype=cfg.elmo.cache_dtype)

    def layer_source(self, cfg, sentences: list[list[str]], name: str) -> LayerSource:
        if cfg.elmo.cache:
            return self.cache(cfg).get(sentences, name)
        return self.encoder(cfg).live(sentences)

    def finetuned(self, cfg, train_text: str, dev_text: str, task_name: str):
        raise ConfigError("elmo.finetune=true fine-tunes the biLM (§3.4); it is not available with encoder=transformer")
