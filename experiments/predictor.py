"""A trained run's model on raw text (``mode=predict``; Peters et al. 2018 §3.3: the task model with
its ELMo mixes, as trained): NER tags and entities, SST-5 sentiment, entailment of TSV pairs, SRL
arguments of a bracketed predicate, SQuAD answer spans. Each task reads its raw lines itself
(``read_raw`` and ``raw_output`` in ``tasks/<name>/task.py``); coreference and the probes take none.

    python run.py mode=predict checkpoint=RUN_DIR data.test_path=raw.txt

or from Python::

    from experiments.predictor import Predictor
    predictor = Predictor.from_run("outputs/runs/<task>/<run>")
    predictor.predict_lines(["EU rejects German call to boycott British lamb ."])   # one dict per line

Input: UTF-8 text, one sentence (NER, SST), one ``premise<TAB>hypothesis`` pair (entailment), one
sentence with its predicate in brackets (SRL: ``The cat [sat] on the mat .``) or one JSON object
``{"context": ..., "question": ...}`` (SQuAD) per line; blank lines are skipped and every output
names its line number. Text is tokenized by the project's tokenizer (``tasks/common/tokenizer.py``:
Penn Treebank conventions, as the biLM's training text), so pre-tokenized text (tokens separated by
spaces) comes out as it went in. Output: JSON lines, one object per input line, written to
``<run dir>/predictions/<file>@<content hash>/predictions.jsonl``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from suite_common.errors import DataError
from tasks.common.text_files import text_lines

from .run_config import RunConfig
from .run_directories import write_text_atomic

INVISIBLE = re.compile("[\u200b-\u200f\u2060\ufeff]")  # zero-width and direction marks, byte order marks


class Predictor:
    def __init__(self, run, task, model, encoder):
        self.run, self.task, self.model, self.encoder = run, task, model, encoder

    @classmethod
    def from_run(cls, checkpoint, device: str = "cpu", overrides: dict | None = None) -> Predictor:
        """A run directory (or its ``best.pt``); ``overrides``: where the encoder's files and cache are now."""
        from .trained_runs import checkpoint_file, load_trained

        return cls(*load_trained(checkpoint_file(checkpoint), device, overrides))

    def predict_lines(self, lines: list[str], where: str = "<lines>", numbers: list[int] | None = None) -> list[dict]:
        """One JSON-ready dict per non-blank line."""
        from .pipeline import with_layers
        from .trainer import predict

        lines = [INVISIBLE.sub("", text) for text in lines]  # a BOM or zero-width space is no text (nor a token)
        kept = [(n, text.rstrip("\n")) for n, text in zip(numbers or range(1, len(lines) + 1), lines) if text.strip()]
        if not kept:
            raise DataError(f"{where}: no text to predict (every line is blank)")
        raw = self.task.read_raw({"line": [n for n, _ in kept], "text": [t for _, t in kept]}, where)
        examples = self.task.prepare(raw, "test")
        split = with_layers(self.run, self.task, {"test": examples}, self.encoder)["test"]
        predictions = predict(self.task, self.model, split, self.run.trainer.eval_batch_size)
        return [self.task.raw_output(row, p) for row, p in zip(examples, predictions, strict=True)]

    def predict_file(self, path, out: Path) -> int:
        """``path``'s predictions as JSON lines in ``out`` (written complete or not at all); returns how many."""
        numbered = [(n, line) for n, line in text_lines(path)]
        results = self.predict_lines([t for _, t in numbered], str(path), [n for n, _ in numbered])
        write_text_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results))
        return len(results)


def predict_mode(run: RunConfig, out_dir: Path | None = None) -> Path:
    """``mode=predict``: ``data.test_path`` (raw text) through the model of ``checkpoint``."""
    from suite_common.hashing import content_sha256

    from .run_config import evaluate_overrides
    from .trained_runs import checkpoint_file, command_line_overrides, test_file

    path = checkpoint_file(run.checkpoint)
    raw = test_file(run, "predict")
    predictor = Predictor.from_run(path, run.device, command_line_overrides(run, evaluate_overrides()))
    out = path.parent / "predictions" / f"{raw.name}@{content_sha256(raw)[:12]}" / "predictions.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    count = predictor.predict_file(raw, out)
    print(f"{count} predictions, one JSON object per line:", file=sys.stderr, flush=True)
    print(out, flush=True)  # the path once, on standard output (for scripts)
    return out
