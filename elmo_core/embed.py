"""Dump biLM layer activations for a text file (the features of Peters et al. 2018, §3.2).

    python -m elmo_core.embed --options O --weights W --input sentences.txt --output out.hdf5 \
        [--batch-size N] [--stateful] [--device cpu|cuda]

Input: one whitespace-tokenized sentence per line (UTF-8). Output: HDF5 with one dataset per
sentence index ("0", "1", ...) of shape (L+1, T, 2*projection_dim) float32, plus
``sentence_to_index`` (a one-element string dataset holding a JSON object: sentence text -> the
sentence's dataset name, as AllenNLP writes it). A sentence's dataset name is its line's index
(0-based), so ``--empty-lines skip`` leaves gaps where the empty lines were and ``keep`` stores an
empty line as shape (L+1, 0, 2*projection_dim); the default refuses them (``error``). The file is
written under a temporary name and renamed at the end, so an interrupted run leaves no half-written output.

Stateless (default): every sentence starts from a zero LSTM state, so its vectors do not depend on
its neighbours; for speed, sentences are grouped by length and laid end to end in ``--batch-size``
LSTM rows (the state is reset where each begins), so that every step runs on all rows. ``--stateful``: the
original behaviour, states carried from one batch to the next per batch row, sentences batched in
file order.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import h5py
import numpy as np
import torch

from suite_common.atomic_files import remove_dead_leftovers, rename_into_place, temporary_path
from suite_common.errors import DataError
from suite_common.progress import progress_bar
from suite_common.remote_files import PRESETS, local_path, preset_files

from .bilm import BiLM
from .characters import batch_to_ids
from .original_format import load_bilm
from .row_packing import words_in_rows


class InputFormatError(DataError):
    pass


EMPTY_LINES = ("error", "skip", "keep")


def read_sentences(path: str | Path, empty_lines: str = "error") -> list[list[str]]:
    """Whitespace-tokenized sentences, one per line; non-UTF-8 lines are errors, and so are empty
    lines unless ``empty_lines`` is ``skip`` or ``keep`` (then an empty line is an empty list)."""
    if empty_lines not in EMPTY_LINES:
        raise ValueError(f"empty_lines={empty_lines!r}: one of {', '.join(EMPTY_LINES)}")
    sentences = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputFormatError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
            tokens = line.split()
            if not tokens and empty_lines == "error":
                raise InputFormatError(
                    f"{path}:{lineno}: empty line (one sentence per line is required; "
                    "--empty-lines skip|keep accepts them)"
                )
            sentences.append(tokens)
    if not any(sentences):
        raise InputFormatError(f"{path}: no sentences")
    return sentences


def batches_in_order(n_sentences: int, batch_size: int) -> list[list[int]]:
    """Sentence indices per batch in file order (stateful: row r of each batch continues row r)."""
    return [list(range(i, min(i + batch_size, n_sentences))) for i in range(0, n_sentences, batch_size)]


def row_groups(lengths: Sequence[int], rows: int, steps: int = 48) -> list[list[int]]:
    """Sentence indices per group for stateless inference on ``rows`` LSTM rows.

    Groups hold about ``rows * steps`` tokens each (with the two boundary tokens per sentence),
    which bounds a group's memory, and at least ``rows`` sentences where there are enough. Each
    group takes every G-th sentence in order of length, so it holds long and short sentences
    alike: the short ones fill the rows up evenly once the long ones are placed."""
    if not lengths:
        return []
    total = sum(n + 2 for n in lengths)
    n_groups = max(1, min(math.ceil(total / (rows * steps)), len(lengths) // rows))
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[g::n_groups] for g in range(n_groups)]


def embed_sentences(
    bilm: BiLM, sentences: Sequence[Sequence[str]], batch_size: int = 64, progress: bool = True
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(index, layers (L+1, T, 2P))`` for every sentence (batch order, not input order).

    Stateless: ``batch_size`` is the number of LSTM rows; sentences are grouped by length and laid
    end to end in the rows (``row_packing``), and no padding is computed or stored. Stateful: batches of ``batch_size``
    sentences in file order, one per row, states carried from batch to batch."""
    device = bilm.bos_ids.device
    lengths = [len(s) for s in sentences]
    groups = batches_in_order(len(lengths), batch_size) if bilm.stateful else row_groups(lengths, batch_size)
    bar = progress_bar(total=sum(lengths), unit="tok", desc="biLM", disable=not progress, mininterval=1.0)
    for group in groups:
        with torch.inference_mode():  # not held across the yields below
            ids = batch_to_ids([sentences[i] for i in group]).to(device)
            if bilm.stateful:
                layers = bilm(ids).layers.float().cpu().numpy()
                per_sentence = [layers[:, row, : lengths[i]] for row, i in enumerate(group)]
            else:  # words of all sentences without padding, sentence after sentence
                words, _ = words_in_rows(bilm, ids, batch_size)
                words = words.float().cpu().numpy()
                starts = np.cumsum([0] + [lengths[i] for i in group])
                per_sentence = [words[:, starts[k] : starts[k + 1]] for k in range(len(group))]
        yield from zip(group, per_sentence)
        bar.update(sum(lengths[i] for i in group))
    bar.close()


def embed_file(
    bilm: BiLM,
    input_path: str | Path,
    output_path: str | Path,
    batch_size: int = 64,
    progress: bool = True,
    empty_lines: str = "error",
) -> int:
    """Embeds every non-empty line of ``input_path`` into ``output_path``; returns how many."""
    sentences = read_sentences(input_path, empty_lines)
    lines = [i for i, s in enumerate(sentences) if s]  # each sentence's line index: its dataset name
    output_path = Path(output_path)
    remove_dead_leftovers(output_path.parent)
    tmp = temporary_path(output_path)
    try:
        with h5py.File(tmp, "w") as f:
            shape = None
            for k, layers in embed_sentences(bilm, [sentences[i] for i in lines], batch_size, progress):
                f.create_dataset(str(lines[k]), data=layers.astype(np.float32))
                shape = layers.shape
            if empty_lines == "keep":
                for i in set(range(len(sentences))) - set(lines):
                    f.create_dataset(str(i), data=np.zeros((shape[0], 0, shape[2]), np.float32))
            kept = range(len(sentences)) if empty_lines == "keep" else lines
            f.attrs["empty_lines"] = empty_lines
            f.attrs["lines"] = len(sentences)
            # as AllenNLP writes it: a one-element string dataset, indices as strings (the dataset names),
            # so json.loads(f["sentence_to_index"][0]) reads it as in AllenNLP's documentation
            index = {" ".join(sentences[i]): str(i) for i in kept}
            f.create_dataset("sentence_to_index", data=[json.dumps(index)], dtype=h5py.string_dtype())
        rename_into_place(tmp, output_path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return len(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m elmo_core.embed",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--model", type=Path, help="a biLM directory with options.json and weights.hdf5 (default: the embedded biLM)"
    )
    ap.add_argument("--options", help="options.json of the biLM (with --weights, instead of --model)")
    ap.add_argument("--weights", help="weights.hdf5 of the biLM (with --options); either may be an https:// URL")
    ap.add_argument("--preset", choices=sorted(PRESETS), help="a published biLM by name (downloaded once, cached)")
    ap.add_argument(
        "--allow-extra-weights",
        action="store_true",
        help="ignore datasets in the weights file that the options do not use (default: an error)",
    )
    ap.add_argument("--input", required=True, help="text file, one tokenized sentence per line")
    ap.add_argument("--output", required=True, help="output HDF5 file")
    ap.add_argument(
        "--batch-size",
        type=int,
        default=64,
        help="LSTM rows per batch: sentences, grouped by length, are laid end to end in this many rows (default 64)",
    )
    ap.add_argument("--stateful", action="store_true", help="carry LSTM states across batches (original)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument(
        "--empty-lines",
        choices=EMPTY_LINES,
        default="error",
        help="empty input lines: error (default), skip (no dataset; names stay line indices) or keep "
        "(a dataset of 0 tokens)",
    )
    args = ap.parse_args(argv)
    if args.batch_size < 1:
        ap.error("--batch-size must be positive")
    if bool(args.options) != bool(args.weights) or (args.options and args.model):
        ap.error("give --model DIR, or both --options and --weights, or none of them (the embedded biLM)")
    if args.preset:
        if args.options or args.model:
            ap.error("give --preset, --model or --options/--weights, not several")
        args.options, args.weights = preset_files(args.preset)
    if not args.options:
        from .pretrained import model_dir

        directory = args.model or model_dir("small")
        args.options, args.weights = directory / "options.json", directory / "weights.hdf5"
    try:
        hint = "--options FILE --weights FILE"  # this command's own flags, not run.py's keys
        args.options, args.weights = local_path(args.options, hint=hint), local_path(args.weights, hint=hint)
        bilm = load_bilm(
            args.options, args.weights, stateful=args.stateful, device=args.device, allow_extra=args.allow_extra_weights
        )
        n = embed_file(
            bilm, args.input, args.output, args.batch_size, progress=not args.no_progress, empty_lines=args.empty_lines
        )
    except (ValueError, OSError) as e:  # BiLMFormatError and InputFormatError are ValueErrors
        raise SystemExit(f"error: {e}") from None
    print(f"wrote {n} sentences to {args.output}")


if __name__ == "__main__":
    main()
