"""What every frozen encoder offers a run (Peters et al. 2018 §3.2-3.3: a frozen model's L+1 layers,
mixed by each task's ELMo weights): ``Encoder``, which holds the run's activation-cache group
(``encoders.config.CacheConfig``) as it was configured.

An encoder is one object per run: its files and their identity (``sha256``, ``identity()`` for the
record, ``cache_identity()`` for the cache key), the shape of its layers (``layer_shape``), its
pass over sentences (``embed``), a live per-batch source (``live``), and the layer sources of a
task's splits (``layer_source``: from the cache, or live when the cache is off). One subclass per
kind: ``encoders.bilm.BiLMEncoder``, ``encoders.transformer.TransformerEncoder``.
"""

from __future__ import annotations

from suite_common.errors import ConfigError

from .activation_cache import ActivationCache, LayerSource
from .config import CacheConfig


class Encoder:
    """A frozen encoder of contextual layers; subclasses give its files and its pass over text."""

    kind: str  # "bilm" | "transformer": what a record calls it
    cache_config: CacheConfig  # the run's ``cache`` group: cache.enabled, cache.dir, cache.dtype, cache.max_gb
    finetune_report: dict | None = None  # set on a biLM fine-tuned on the task's text (§3.4)

    @property
    def sha256(self) -> str:
        """One digest of the files its layers depend on (a run's identity holds it)."""
        raise NotImplementedError

    @property
    def files(self) -> str:
        """Where its files are, for messages."""
        raise NotImplementedError

    def identity(self) -> dict:
        """What a record stores about the encoder."""
        raise NotImplementedError

    def cache_identity(self) -> list:
        """What its activations depend on besides the text (file hashes, policies)."""
        raise NotImplementedError

    def layer_shape(self) -> tuple[int, int]:
        """(L+1, D): the number of layers a mix weights and their dimension."""
        raise NotImplementedError

    def meta(self) -> dict:
        """What a cache entry records about the encoder that built it."""
        raise NotImplementedError

    def embed(self, sentences: list[list[str]], name: str | None):
        """``(i, layers (L+1, T_i, D))`` for every sentence, in order (counting its batches in
        ``ActivationCache.encoder_passes``); ``name`` labels the progress bar (None: silent)."""
        raise NotImplementedError

    def live(self, sentences: list[list[str]]) -> LayerSource:
        """The encoder run per batch instead of cached (``cache.enabled=false``)."""
        raise NotImplementedError

    def cache(self) -> ActivationCache:
        return ActivationCache(self.cache_config.dir, self, dtype=self.cache_config.dtype)

    def check_budget(self, named: dict[str, list[list[str]]]) -> None:
        """With the cache on: stop before writing anything if the entries still missing would not fit
        the disk or ``cache.max_gb`` (``ActivationCache.check_budget``)."""
        if self.cache_config.enabled:
            self.cache().check_budget(named, self.cache_config.max_gb)

    def layer_source(self, sentences: list[list[str]], name: str) -> LayerSource:
        """The layers of ``sentences``: from the activation cache, or computed per batch."""
        if self.cache_config.enabled:
            return self.cache().get(sentences, name)
        return self.live(sentences)

    def finetuned(self, train_text: str, dev_text: str, task_name: str) -> Encoder:
        raise ConfigError(
            f"encoder.finetune=true fine-tunes the biLM (§3.4); it is not available with encoder={self.kind}"
        )
