"""Run allennlp 2.10.1's ``train`` command on today's torch, transformers and huggingface_hub.

    .venv-conformance/bin/python benchmarks/conformance/allennlp_launcher.py CONFIG.json SERIALIZATION_DIR PACKAGE...

Runs only in the harness's own environment (``make conformance-env``), never in the suite's.
allennlp 2.10.1 imports three names that no longer exist (``transformers.AdamW``,
``huggingface_hub.HfFolder`` and ``huggingface_hub.Repository``) and passes ``verbose`` to
``ReduceLROnPlateau``, which torch 2.x removed; this launcher supplies stand-ins for exactly those
before allennlp is imported. Only the task subpackages named on the command line are imported
(``allennlp_models`` as a whole needs torchvision). A trainer callback, ``conformance_epoch_times``,
writes each epoch's process CPU seconds, wall seconds and metrics to ``epoch_times.json`` in the
serialization directory; the tokenizer ``suite_regex`` gives the reference the suite's tokens.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import time
import types
from pathlib import Path


def install_stand_ins() -> None:
    import huggingface_hub
    import torch
    import transformers

    if not hasattr(transformers, "AdamW"):
        # on the lazy module's class: transformers re-creates the module's own attributes on import
        type(transformers).AdamW = torch.optim.AdamW

    class _Unavailable:
        """Hub upload helpers allennlp imports but the harness never calls (no network here)."""

        def __init__(self, *args, **kwargs):
            raise RuntimeError("the conformance harness does not talk to the Hugging Face hub")

    for name in ("HfFolder", "Repository"):
        if not hasattr(huggingface_hub, name):
            setattr(huggingface_hub, name, _Unavailable)

    # allennlp.data imports torchvision for its image loader, which no text task uses; a build of
    # torchvision for torch 2.13 is not installable beside it, so an empty module stands in.
    if importlib.util.find_spec("torchvision") is None:
        for name in ("torchvision", "torchvision.ops", "torchvision.ops.boxes"):
            sys.modules.setdefault(name, types.ModuleType(name))

    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau
    original_init = plateau.__init__

    def init_without_verbose(self, *args, verbose=None, **kwargs):
        original_init(self, *args, **kwargs)

    plateau.__init__ = init_without_verbose


def register_harness_parts() -> None:
    """The epoch timer and ``suite_regex``, a tokenizer with the suite's own rules and offsets
    (``tasks/common/tokenizer.py``, loaded from its file so the suite need not be installed here)."""
    from allennlp.data.tokenizers import Token, Tokenizer
    from allennlp.training.callbacks.callback import TrainerCallback

    path = Path(__file__).resolve().parents[2] / "tasks" / "common" / "tokenizer.py"
    spec = importlib.util.spec_from_file_location("suite_tokenizer", path)
    suite_tokenizer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite_tokenizer)

    @Tokenizer.register("suite_regex")
    class SuiteTokenizer(Tokenizer):
        def tokenize(self, text: str) -> list:
            return [Token(t, idx=start, idx_end=end) for t, start, end in suite_tokenizer.tokenize_with_offsets(text)]

    @TrainerCallback.register("conformance_epoch_times")
    class EpochTimes(TrainerCallback):
        def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
            self._cpu, self._wall, self._epochs = time.process_time(), time.perf_counter(), []

        def on_epoch(self, trainer, metrics, epoch: int, is_primary: bool = True, **kwargs) -> None:
            cpu, wall = time.process_time(), time.perf_counter()
            self._epochs.append(
                {
                    "epoch": epoch + 1,
                    "cpu_seconds": round(cpu - self._cpu, 1),
                    "wall_seconds": round(wall - self._wall, 1),
                    "metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
                }
            )
            self._cpu, self._wall = cpu, wall
            out = Path(self.serialization_dir) / "epoch_times.json"
            out.write_text(json.dumps(self._epochs, indent=1))


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    config, serialization_dir, packages = argv[0], argv[1], argv[2:]
    install_stand_ins()
    for package in packages:
        importlib.import_module(package)
    register_harness_parts()
    from allennlp.commands.train import train_model_from_file

    train_model_from_file(config, serialization_dir, force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
