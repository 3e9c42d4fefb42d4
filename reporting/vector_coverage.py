"""How much of each task's text a vectors file covers (the static vectors of Peters et al. 2018's baselines,
§4 and appendix A): per task, data set and split, the share of tokens and of distinct words that have a
vector, matched as the task's word embedding matches them (exactly, case included; NER's lowercased where
its profile lowercases). The shipped vectors' card quotes these figures.

    python -m reporting.vector_coverage [--vectors FILE] [--profile quick] [--out FILE.md]

Without ``--vectors``, each task's profile's own (``task.model.vectors``, the shipped file of its size)."""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import date
from pathlib import Path

import pandas as pd

from static_vectors.store import is_hdf5, read_hdf5, text_rows
from suite_common.atomic_files import write_text_atomic
from suite_common.errors import SuiteError

ROWS = (  # (task, data set choice or None): Table 1's rows
    ("ner", None), ("ner", "wnut17"), ("ner", "wikiann_en"), ("sst", None), ("srl", None), ("qa", None),
    ("nli", None), ("coref", None),
)  # fmt: skip


def vocabulary(path: str | Path) -> set[str]:
    if is_hdf5(path):
        return set(read_hdf5(path)[0])
    return {word for _, word, _ in text_rows(path)}


def coverage_rows(vectors: str | None, profile: str) -> pd.DataFrame:
    from experiments.config_store import compose
    from experiments.pipeline import make_task, training_splits
    from experiments.run_config import as_run

    rows, vocabularies = [], {}
    for task_name, data_set in ROWS:
        overrides = [
            f"task={task_name}",
            "source=local",
            f"profile={profile}",
            *([f"data={data_set}"] if data_set else []),
        ]
        run = as_run(compose(overrides))
        path = vectors or run.task.model.vectors_file
        if path is None:
            continue
        words = vocabularies.setdefault(str(path), vocabulary(path))
        task = make_task(run)
        for split, ds in training_splits(run, task).items():
            tokens = [task.word_key(t) for sentence in task.sentences(ds) for t in sentence]
            distinct = set(tokens)
            rows.append(
                {
                    "task": task_name + (f" ({data_set})" if data_set else ""),
                    "split": split,
                    "vectors": Path(path).name,
                    "tokens": len(tokens),
                    "tokens covered": f"{100 * sum(t in words for t in tokens) / max(len(tokens), 1):.1f}%",
                    "distinct words": len(distinct),
                    "distinct words covered": f"{100 * len(distinct & words) / max(len(distinct), 1):.1f}%",
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reporting.vector_coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", help="a vectors file (default: each task's profile's own)")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args(argv)
    try:
        table = coverage_rows(args.vectors, args.profile)
    except (SuiteError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = table.to_markdown(index=False)
    print(text)
    if args.out:
        command = " ".join(["python -m reporting.vector_coverage", *(argv if argv is not None else sys.argv[1:])])
        machine = f"{platform.machine()}, Python {platform.python_version()}"
        made = f"Made by `{command}` on {date.today().isoformat()} ({machine})."
        write_text_atomic(args.out, f"{made}\nThe share of each split's tokens and words with a vector.\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
