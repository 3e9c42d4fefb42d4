"""elmo_core: the ELMo biLM (Peters et al. 2018) in PyTorch, compatible with the original
``options.json`` + ``weights.hdf5`` format. Depends on torch, numpy and h5py only."""

from .bilm import BiLM, BiLMOutput
from .characters import batch_to_ids
from .elmo import Elmo, ElmoOutput
from .options import BiLMFormatError, BiLMOptions, read_options
from .original_format import file_sha256, load_bilm, save_bilm
from .scalar_mix import ScalarMix

__all__ = [
    "BiLM",
    "BiLMOutput",
    "BiLMFormatError",
    "BiLMOptions",
    "Elmo",
    "ElmoOutput",
    "ScalarMix",
    "batch_to_ids",
    "file_sha256",
    "load_bilm",
    "read_options",
    "save_bilm",
]
