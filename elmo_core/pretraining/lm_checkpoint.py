"""Checkpoints and exported models of biLM training (§3.4: the pretrained, then fine-tuned, biLM).

A checkpoint (``checkpoint.pt``) resumes training exactly: weights, optimizer, (epoch, batch)
position, the carried LSTM states of every row of the global batch, and every worker's RNG state.
It records what it was made for (model options, vocabulary digest, batch layout, seed, files,
starting model); resuming with anything else is refused, as is an unreadable file. It is written
to a temporary name and renamed, so an interrupt never leaves a half-written checkpoint.

An exported model is the original ``options.json`` + ``weights.hdf5`` (readable by any ELMo tool)
plus ``vocab.txt`` and the softmax under ``softmax/*`` in the hdf5 file, so that training can
continue from it (domain fine-tuning).
"""

from __future__ import annotations

import sys
from pathlib import Path

import h5py
import torch
import torch.distributed as dist

from suite_common.atomic_files import torch_save_atomic
from suite_common.errors import WeightsError

from ..original_format import load_bilm, save_bilm
from .lm_data import Vocabulary
from .lm_training import LanguageModel

FORMAT = "elmo-suite/bilm-checkpoint/1"


class CheckpointError(WeightsError):
    pass


def _gather_rows(tensor: torch.Tensor, world: int) -> torch.Tensor:
    if world == 1:
        return tensor
    parts = [torch.empty_like(tensor) for _ in range(world)]
    dist.all_gather(parts, tensor.contiguous())
    return torch.cat(parts)


def save_checkpoint(
    path: Path, identity: dict, lm: LanguageModel, optimizer, progress: dict, local_state, rank: int, world: int
) -> None:
    state = [(_gather_rows(h, world).cpu(), _gather_rows(c, world).cpu()) for h, c in local_state]
    rng = [torch.get_rng_state()]
    if world > 1:
        rng = [None] * world
        dist.all_gather_object(rng, torch.get_rng_state())
    if rank == 0:
        payload = {
            "format": FORMAT,
            "identity": identity,
            "model": lm.state_dict(),
            "optimizer": optimizer.state_dict(),
            "progress": dict(progress),
            "state": state,
            "rng": rng,
            "world": world,
        }
        torch_save_atomic(payload, path)
    if world > 1:
        dist.barrier()


def load_checkpoint(
    path: Path, identity: dict, lm: LanguageModel, optimizer, rank: int, world: int, device
) -> tuple[dict, list]:
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated/corrupt zip archives
        raise CheckpointError(
            f"{path}: corrupt or unreadable checkpoint ({type(e).__name__}: {e}); delete it to start over"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a biLM training checkpoint of this version ({FORMAT})")
    saved = payload["identity"]
    differ = [k for k in identity if saved.get(k) != identity[k]]
    if differ:
        details = "; ".join(f"{k}: checkpoint {saved.get(k)!r} vs now {identity[k]!r}" for k in differ)
        raise CheckpointError(f"{path}: made for a different run ({details}); use another --out to start afresh")
    try:
        lm.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
    except (RuntimeError, ValueError, KeyError) as e:
        raise CheckpointError(f"{path}: weights do not fit the model: {e}") from None
    if payload["world"] == world:
        torch.set_rng_state(payload["rng"][rank])
    elif rank == 0:
        print(
            f"warning: checkpoint written by {payload['world']} workers, resuming with {world}: "
            f"dropout masks will differ from an uninterrupted run",
            file=sys.stderr,
        )
    state = [(h.to(device), c.to(device)) for h, c in payload["state"]]
    return payload["progress"], state


def save_language_model(lm: LanguageModel, vocab: Vocabulary, out: Path) -> None:
    sm = lm.softmax
    lm.bilm.opts.extra["n_tokens_vocab"] = len(vocab)
    lm.bilm.opts.extra["softmax"] = {
        "type": "adaptive",
        "cutoffs": sm.cutoffs[:-1],
        "div_value": sm.div_value,
        "vocab_size": len(vocab),
        "dropout": lm.dropout,
    }
    arrays = {f"softmax/{k}": v.detach().cpu().float().numpy() for k, v in sm.state_dict().items()}
    save_bilm(lm.bilm, out / "options.json", out / "weights.hdf5", extra_arrays=arrays)
    vocab.save(out / "vocab.txt")


def load_language_model(
    model_dir: Path, dropout: float | None = None, allow_extra: bool = False
) -> tuple[LanguageModel, Vocabulary, dict]:
    """An exported model ready to train further; its softmax is reused when the file has one (and its
    options declare it); other datasets the options do not use are an error unless ``allow_extra``."""
    model_dir = Path(model_dir)
    vocab_path = model_dir / "vocab.txt"
    if not vocab_path.exists():
        raise CheckpointError(f"{vocab_path}: a vocabulary is needed to train or evaluate the language model")
    vocab = Vocabulary.load(vocab_path)
    bilm = load_bilm(
        model_dir / "options.json", model_dir / "weights.hdf5", requires_grad=True, allow_extra=allow_extra
    )
    cfg = bilm.opts.extra.get("softmax", {})
    if cfg and cfg.get("vocab_size") != len(vocab):
        raise CheckpointError(f"{model_dir}: softmax is for {cfg.get('vocab_size')} words, vocab.txt has {len(vocab)}")
    lm = LanguageModel(
        bilm,
        len(vocab),
        cfg.get("cutoffs"),
        dropout if dropout is not None else cfg.get("dropout", 0.1),
        cfg.get("div_value", 4.0),
    )
    with h5py.File(model_dir / "weights.hdf5", "r") as f:
        if "softmax" in f and cfg:
            _load_softmax(lm, f["softmax"], model_dir)
            return lm, vocab, {"softmax": "loaded"}
    print(f"warning: {model_dir / 'weights.hdf5'} has no softmax; starting a new one", file=sys.stderr)
    return lm, vocab, {"softmax": "new"}


def _load_softmax(lm: LanguageModel, group: h5py.Group, model_dir: Path) -> None:
    arrays = {}
    group.visititems(
        lambda name, obj: (
            arrays.__setitem__(name.replace("/", "."), obj[...]) if isinstance(obj, h5py.Dataset) else None
        )
    )
    try:
        lm.softmax.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()})
    except RuntimeError as e:
        raise CheckpointError(f"{model_dir / 'weights.hdf5'}: softmax does not fit the options: {e}") from None
