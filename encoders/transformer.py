"""A frozen Transformer (BERT and kin, Devlin et al. 2019) as a run's encoder, in place of the biLM
(Peters et al. 2018 §3.2-3.3 apply unchanged: the task's ELMo mixes weight the encoder's L+1 layers —
the embedding output and every hidden layer — at the input and/or output of the task model).

Its identity is one SHA-256 over the model's weights, configuration and tokenizer files; its cache
entries are keyed by those files, the word pooling and the window length. ``encoder.model`` is a
local ``save_pretrained`` directory or a hub name (through the local Hugging Face cache); null means
the embedded small BERT.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from suite_common.errors import ConfigError, EncoderError

from .activation_cache import ActivationCache, EmbeddedLayers, LayerSource
from .base import Encoder
from .config import CacheConfig


@dataclass(frozen=True, eq=False)
class TransformerEncoder(Encoder):
    model: str  # as configured (a directory or a hub name)
    model_dir: Path  # where its files are
    pooling: str = "first"
    max_length: int | None = None
    batch_size: int = 32  # sentences per encoder batch when filling the cache
    device: str = "cpu"
    cache_config: CacheConfig = CacheConfig()
    kind = "transformer"

    @classmethod
    def from_config(cls, settings, cache, device: str = "cpu") -> TransformerEncoder:
        """``encoder.model`` (null: the embedded small BERT), its revision, pooling, window and batch size
        (a ``TransformerConfig``), with the run's cache settings and device."""
        from bert_core.word_layers import resolve_model_dir

        model = settings.model
        if not model:
            from bert_core.pretrained import model_dir

            try:
                model = str(model_dir("small"))
            except FileNotFoundError as e:
                raise ConfigError(f"{e}; pass encoder.model=DIR") from None
        return cls(
            str(model),
            resolve_model_dir(str(model), settings.revision),
            settings.pooling,
            settings.max_length,
            settings.batch_size,
            str(device),
            cache,
        )

    def file_hashes(self) -> dict[str, str]:
        """The SHA-256 of the model's files, under the setting that names them."""
        return {"model": self.sha256}

    @cached_property
    def sha256(self) -> str:
        from bert_core.word_layers import model_files_sha256

        return model_files_sha256(self.model_dir)

    @property
    def files(self) -> str:
        return str(self.model_dir)

    def identity(self) -> dict:
        return {
            "kind": "transformer",
            "model": self.model,
            "model_dir": str(self.model_dir),
            "sha256": self.sha256,
            "pooling": self.pooling,
            "max_length": self.max_length,
        }

    def cache_identity(self) -> list:
        # the batch size changes the padding, and with it the last bits of the layers
        return ["transformer", self.sha256, self.pooling, self.max_length, f"b{self.batch_size}"]

    def layer_shape(self) -> tuple[int, int]:
        """(L+1, hidden) from the model's config.json, without loading the weights."""
        try:
            config = json.loads((self.model_dir / "config.json").read_text())
            return int(config["num_hidden_layers"]) + 1, int(config["hidden_size"])
        except (OSError, ValueError, KeyError) as e:
            raise EncoderError(
                f"{self.model_dir / 'config.json'}: no num_hidden_layers/hidden_size ({type(e).__name__})"
            ) from None

    def meta(self) -> dict:
        return {
            "encoder": "transformer",
            "model_sha256": self.sha256,
            "pooling": self.pooling,
            "max_length": self.max_length,
        }

    @cached_property
    def word_encoder(self):
        from bert_core.word_layers import TransformerWordEncoder

        return TransformerWordEncoder(self.model_dir, self.pooling, self.max_length, self.device)

    def embed(self, sentences: list[list[str]], name: str | None):
        encoder = self.word_encoder
        if name is not None:
            print(
                f"Transformer pass over {name}: {len(sentences)} sentences, {sum(map(len, sentences))} words",
                file=sys.stderr,
            )
        yield from encoder.embed_sentences(sentences, self.batch_size, progress=name is not None)
        ActivationCache.encoder_passes += -(-len(sentences) // self.batch_size)

    def live(self, sentences: list[list[str]]) -> LayerSource:
        return EmbeddedLayers(self, sentences)
