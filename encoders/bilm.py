"""The biLM as a run's encoder (Peters et al. 2018 §3.1-3.4): a frozen biLM in the original format —
the embedded one, one given by ``encoder.options``/``encoder.weights``, or either of them fine-tuned on
the task's training text first (§3.4, ``encoder.finetune``) — with its state policy (stateless;
stateful with states carried across batches in file order, as the original; stateful after a
warm-up of the data's first batches) and its pass over a dataset.
"""

from __future__ import annotations

import errno
import json
import shutil
import socket
import sys
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import torch

from elmo_core import batch_to_ids, file_sha256, load_bilm, read_options
from elmo_core.embed import embed_sentences
from suite_common.atomic_files import rename_into_place
from suite_common.errors import ConfigError, WeightsError
from suite_common.hashing import sha256_hex
from suite_common.locks import locked
from suite_common.remote_files import local_path, preset_files

from .activation_cache import ActivationCache, LayerSource
from .base import Encoder
from .config import STATE_POLICIES, BilmConfig, CacheConfig

_BILM = BilmConfig()


class LiveLayers:
    """Runs the biLM per batch (``cache.enabled=false``); its carried state, if stateful, follows the batches."""

    def __init__(self, bilm, sentences: list[list[str]]):
        self.bilm, self.sentences = bilm, sentences

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.inference_mode():
            out = self.bilm(batch_to_ids([self.sentences[i] for i in indices]).to(self.bilm.bos_ids.device))
        return out.layers.clone().cpu(), out.mask.clone().cpu()


FINETUNE_SEED = 0  # encoder.finetune_seed's default; one fine-tuning is shared by the runs (and seeds) on its text


def finetune_key(
    base_sha256: str,
    train_text: str,
    dev_text: str,
    epochs: int,
    seed: int | None = FINETUNE_SEED,
    compute: str | None = None,
) -> str:
    """The name of a fine-tuned biLM's directory: the base weights, the text, the epochs, the seed and
    what computed it (``finetune_compute``: the CPU's thread count reorders float sums, so one thread and
    two give other weights). ``seed=None`` gives the names of fine-tunings made before they were seeded
    (2026-11-25) and ``compute=None`` those made before the compute was part of the name (2026-12-03);
    neither is therefore ever taken for a newer one."""
    parts = [base_sha256, train_text, dev_text, epochs] + ([f"seed {seed}"] if seed is not None else [])
    return sha256_hex(json.dumps(parts + ([f"compute {compute}"] if compute is not None else [])))[:16]


def finetune_compute(device: str) -> str:
    """What a fine-tuning on ``device`` now would be computed by: ``cpu threads N`` (torch's intra-op
    thread count) or the accelerator's type (``cuda``)."""
    kind = torch.device(device).type
    return f"cpu threads {torch.get_num_threads()}" if kind == "cpu" else kind


@dataclass(frozen=True, eq=False)
class BiLMEncoder(Encoder):
    options: Path
    weights: Path
    origin: str = "embedded"  # embedded | given | finetuned
    state: str = _BILM.state  # the defaults are the configuration's (encoders.config.BilmConfig)
    batch_size: int = _BILM.batch_size  # sentences per biLM batch when filling the cache
    device: str = "cpu"
    warmup_batches: int = _BILM.warmup_batches  # read with stateful_warmup only (0 otherwise)
    allow_extra: bool = False  # datasets of weights.hdf5 its options do not use are ignored instead of an error
    cache_config: CacheConfig = CacheConfig()
    finetune_epochs: int = _BILM.finetune_epochs
    finetune_seed: int = _BILM.finetune_seed
    finetune_report: dict | None = field(default=None, compare=False)
    kind = "bilm"

    def __post_init__(self):
        if self.state not in STATE_POLICIES:
            raise ConfigError(f"encoder.state must be one of {STATE_POLICIES}, got {self.state!r}")
        object.__setattr__(self, "options", Path(self.options))
        object.__setattr__(self, "weights", Path(self.weights))
        if self.state != "stateful_warmup":
            object.__setattr__(self, "warmup_batches", 0)

    @classmethod
    def from_config(cls, bilm: BilmConfig, cache: CacheConfig, device: str = "cpu") -> BiLMEncoder:
        """``encoder.options`` + ``encoder.weights`` (or ``encoder.preset``), or the embedded biLM when
        none is given, with the run's state policy, batch size, device and cache settings."""
        settings = dict(
            state=bilm.state,
            batch_size=int(bilm.batch_size),
            device=str(device),
            warmup_batches=int(bilm.warmup_batches),
            cache_config=cache,
            finetune_epochs=int(bilm.finetune_epochs),
            finetune_seed=int(bilm.finetune_seed),
        )
        options, weights = bilm.options, bilm.weights
        if bilm.preset:
            if options or weights:
                raise ConfigError("give encoder.preset or encoder.options + encoder.weights, not both")
            options, weights = preset_files(bilm.preset)
        if options or weights:
            if not (options and weights):
                raise ConfigError("give both encoder.options and encoder.weights (or neither, for the embedded biLM)")
            return cls(
                local_path(options),
                local_path(weights),
                "given",  # a URL: its verified cached copy
                allow_extra=bool(bilm.allow_extra_weights),
                **settings,
            )
        return cls(*embedded_files(), "embedded", **settings)

    def file_hashes(self) -> dict[str, str]:
        """The SHA-256 of each file its configuration names, by setting (a run's identity holds them)."""
        return {"options": self.options_sha256, "weights": self.sha256}

    @cached_property
    def sha256(self) -> str:
        return file_sha256(self.weights)

    @cached_property
    def options_sha256(self) -> str:
        return file_sha256(self.options)

    @property
    def files(self) -> str:
        return str(self.weights)

    def identity(self) -> dict:
        return {"options": str(self.options), "weights": str(self.weights), "sha256": self.sha256}

    def cache_identity(self) -> list:
        # every activation depends on the batch size: stateful ones through the carried states, stateless
        # ones in their last bits (other padding, other matrix shapes: up to 1.4e-6 measured)
        state = (
            f"stateless-b{self.batch_size}"
            if self.state == "stateless"
            else f"{self.state}-b{self.batch_size}-w{self.warmup_batches}"
        )
        return ["bilm", self.sha256, self.options_sha256, state]

    def layer_shape(self) -> tuple[int, int]:
        """(number of layers L+1, dimension 2·projection_dim) of the activations."""
        opts = read_options(self.options)
        return opts.n_layers + 1, 2 * opts.projection_dim

    def meta(self) -> dict:
        return {
            "encoder": "bilm",
            "state": self.state,
            "warmup_batches": self.warmup_batches,
            "bilm_sha256": self.sha256,
            "options_sha256": self.options_sha256,
        }

    def load(self):
        """A fresh copy of the biLM (its own carried state)."""
        return load_bilm(
            self.options,
            self.weights,
            stateful=self.state != "stateless",
            device=self.device,
            allow_extra=self.allow_extra,
        )

    @cached_property
    def model(self):
        """The copy that fills the cache (loaded once; its state is reset before each pass)."""
        return self.load()

    def embed(self, sentences: list[list[str]], name: str | None):
        bilm = self.model
        bilm.reset_state()
        for start in range(0, min(self.warmup_batches * self.batch_size, len(sentences)), self.batch_size):
            with torch.inference_mode():  # warm-up: run the data's first batches, keep only the states
                bilm(batch_to_ids(sentences[start : start + self.batch_size]).to(bilm.bos_ids.device))
            ActivationCache.encoder_passes += 1
        if name is not None:
            print(
                f"biLM pass over {name}: {len(sentences)} sentences, {sum(map(len, sentences))} tokens", file=sys.stderr
            )
        yield from embed_sentences(bilm, sentences, self.batch_size, progress=name is not None)
        ActivationCache.encoder_passes += -(-len(sentences) // self.batch_size)

    def live(self, sentences: list[list[str]]) -> LayerSource:
        return LiveLayers(self.load(), sentences)

    def layer_source(self, sentences: list[list[str]], name: str) -> LayerSource:
        if not self.cache_config.enabled and self.state not in ("stateless", "stateful"):
            raise ConfigError(f"encoder.state={self.state} needs cache.enabled=true (the warm-up runs while caching)")
        return super().layer_source(sentences, name)

    def _finetune_into(self, out: Path, train_text: str, dev_text: str, task_name: str) -> None:
        """Fine-tune in ``<key>.partial-<host>`` (resumable there) and move it to ``out`` when finished, so
        ``out`` only ever holds a whole fine-tuning; when another host's process (no shared lock there) put
        one in place first, that one is kept."""
        from elmo_core.pretrain import finetune

        work = out.with_name(f"{out.name}.partial-{socket.gethostname()}")
        work.mkdir(exist_ok=True)
        (work / "task_train.txt").write_text(train_text, encoding="utf-8")
        (work / "task_dev.txt").write_text(dev_text, encoding="utf-8")
        print(f"fine-tuning the biLM on {task_name} training text -> {out}", flush=True)
        finetune(
            self.options.parent,
            work / "task_train.txt",
            work / "task_dev.txt",
            work,
            epochs=self.finetune_epochs,
            seed=self.finetune_seed,
            device=self.device,
        )
        try:
            rename_into_place(work, out)
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            if finished_finetuning(out):  # another host's process put a whole one in place first
                shutil.rmtree(work, ignore_errors=True)
                return
            shutil.rmtree(out)  # unfinished: left by an interrupted run from before fine-tunings were moved in whole
            rename_into_place(work, out)

    def finetuned(self, train_text: str, dev_text: str, task_name: str) -> BiLMEncoder:
        """§3.4 / Table 7: this biLM trained further on a task's text (labels ignored) for
        ``encoder.finetune_epochs``, then frozen. Kept under ``<cache_dir>/../finetuned/<hash>`` keyed
        by the weights, the text, the seed and the compute (``finetune_key``), so every run (and task seed)
        on the same data and thread count shares it."""
        if not (self.options.parent / "vocab.txt").exists():
            raise WeightsError(
                f"encoder.finetune needs the biLM's vocab.txt and softmax beside {self.options} "
                "(models exported by elmo_core.pretrain have them)"
            )
        compute = finetune_compute(self.device)
        key = finetune_key(self.sha256, train_text, dev_text, self.finetune_epochs, self.finetune_seed, compute)
        out = Path(self.cache_config.dir).parent / "finetuned" / key
        with locked(out.parent / ".locks" / key):  # the runs of a parallel sweep share one fine-tuning:
            if not finished_finetuning(out):  # the second waits for the first's (released also when it dies)
                self._finetune_into(out, train_text, dev_text, task_name)
            summary = json.loads((out / "summary.json").read_text())
        report = {
            "dir": str(out),
            "dev_perplexity_before": summary["heldout_perplexity_before"]["average"],
            "dev_perplexity_after": summary["heldout_perplexity"]["average"],
            "tokens": summary["progress"]["tokens"],
            "seed": self.finetune_seed,  # records without it used a fine-tuning made before it was seeded
            "compute": compute,  # records without it: a fine-tuning whose thread count was not kept
        }
        return replace(
            self,
            options=out / "options.json",
            weights=out / "weights.hdf5",
            origin="finetuned",
            allow_extra=False,
            finetune_report=report,
        )


def finished_finetuning(out: Path) -> bool:
    summary = out / "summary.json"
    return summary.is_file() and bool(json.loads(summary.read_text())["progress"].get("finished"))


def embedded_files() -> tuple[Path, Path]:
    """The embedded biLM's options and weights (``elmo_core/pretrained/small``)."""
    from elmo_core.pretrained import model_dir

    try:
        d = model_dir("small")
    except FileNotFoundError as e:
        raise ConfigError(f"{e}; pass encoder.options=... encoder.weights=...") from None
    return d / "options.json", d / "weights.hdf5"
