"""The data both sides of a conformance run read: the suite's local files, cut to the same
training subset and written in the layout each AllenNLP reader expects.

Each function writes into ``out`` and returns ``{"suite": {override: path}, "reference": {...},
"notes": [...]}``. The suite's readers do the reading, so both sides see the same tokens:

* NER: the first ``limit`` sentences of CoNLL-2003 ``eng.train`` (original 4 columns, both sides).
* SICK: the TSV for the suite; for AllenNLP's ``snli`` reader the same pairs as JSON lines
  (``sentence1``, ``sentence2``, ``gold_label``), tokenized on both sides by the suite's tokenizer.
* SST-5: the tree files as they are (whole sentences on both sides).
* SQuAD: the first ``limit`` articles of the local ``train.json``; dev as it is.
* SRL: Universal PropBank read by the suite's reader and written as CoNLL-2012 ``*gold_conll``
  (one bracketed column per predicate, in predicate order; sentences without a predicate
  dropped, as the suite drops them); both sides read the written files.
* Coreference: LitBank's CoNLL files with the empty columns the OntoNotes reader parses filled
  (POS ``XX`` so that no parse tree is built, ``-`` for lemma, frame, sense and speaker, ``*`` for
  named entities); tokens, sentence breaks and the coreference column unchanged. The reference's
  training file holds the suite's training windows, each as a document.
"""

from __future__ import annotations

import json
from pathlib import Path

from suite_common.atomic_files import write_text_atomic
from tasks.coref.config import CorefConfig
from tasks.srl.reader import read_conllu_propbank_file

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _write(path: Path, text: str) -> Path:
    """Complete or absent (a comparison running beside this one may be reading the same file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return path


def ner(out: Path, limit: int | None) -> dict:
    src = SHARED_DATA / "conll2003"
    blocks, current = [], []
    for line in (src / "eng.train").read_text(encoding="utf-8").splitlines():
        if line.startswith("-DOCSTART-"):
            continue
        if line.strip():
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    kept = blocks[:limit] if limit else blocks
    train = _write(out / "eng.train", "\n\n".join("\n".join(b) for b in kept) + "\n")
    dev = src / "eng.testa"
    return {
        "suite": {"data.train_path": train, "data.dev_path": dev},
        "reference": {"train": train, "dev": dev},
        "notes": [f"train: the first {len(kept)} sentences of eng.train; dev: eng.testa"],
    }


def nli(out: Path, limit: int | None) -> dict:
    src = SHARED_DATA / "nli_sick"
    paths = {}
    for split in ("train", "dev"):
        lines = (src / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        header, rows = lines[0], [r for r in lines[1:] if r.strip()]
        if split == "train" and limit:
            rows = rows[:limit]
        tsv = _write(out / f"{split}.tsv", "\n".join([header] + rows) + "\n")
        col = {name: i for i, name in enumerate(header.split("\t"))}
        jsonl = [
            json.dumps(
                {
                    "sentence1": c[col["sentence_A"]],
                    "sentence2": c[col["sentence_B"]],
                    "gold_label": c[col["entailment_label"]].lower(),
                }
            )
            for c in (r.split("\t") for r in rows)
        ]
        paths[split] = (tsv, _write(out / f"{split}.jsonl", "\n".join(jsonl) + "\n"))
    return {
        "suite": {"data.train_path": paths["train"][0], "data.dev_path": paths["dev"][0]},
        "reference": {"train": paths["train"][1], "dev": paths["dev"][1]},
        "notes": ["SICK train.tsv / dev.tsv; the reference reads the same pairs as SNLI-style JSON lines"],
    }


def sst(out: Path, limit: int | None) -> dict:
    src = SHARED_DATA / "sst"
    lines = (src / "train.txt").read_text(encoding="utf-8").splitlines()
    train = _write(out / "train.txt", "\n".join(lines[:limit] if limit else lines) + "\n")
    return {
        "suite": {"data.train_path": train, "data.dev_path": src / "dev.txt"},
        "reference": {"train": train, "dev": src / "dev.txt"},
        "notes": [
            f"{f'the first {limit}' if limit else 'all'} training trees, read as whole sentences or, in the "
            "phrases variant, as every phrase (subtree) on both sides; dev: whole sentences"
        ],
    }


def qa(out: Path, limit: int | None) -> dict:
    src = SHARED_DATA / "squad"
    data = json.loads((src / "train.json").read_text(encoding="utf-8"))
    if limit:
        data["data"] = data["data"][:limit]
    train = _write(out / "train.json", json.dumps(data))
    questions = sum(len(p["qas"]) for a in data["data"] for p in a["paragraphs"])
    return {
        "suite": {"data.train_path": train, "data.dev_path": src / "dev.json"},
        "reference": {"train": train, "dev": src / "dev.json"},
        "notes": [f"train: the first {len(data['data'])} articles of the local train.json ({questions} questions)"],
    }


def _gold_conll_rows(doc: str, tokens: list[str], columns: list[list[str]]) -> list[str]:
    rows = []
    for i, token in enumerate(tokens):
        cells = [doc, "0", str(i), token, "XX", "*", "-", "-", "-", "-", "*"] + [c[i] for c in columns] + ["-"]
        rows.append("\t".join(cells))
    return rows


def bio_to_brackets(tags: list[str]) -> list[str]:
    """BIO tags of one predicate as a CoNLL-2012 argument column: ``(ARG0*``, ``*``, ``*)``, ``(V*)``."""
    column = ["*"] * len(tags)
    for i, tag in enumerate(tags):
        if tag.startswith("B-"):
            column[i] = f"({tag[2:]}*"
        inside_next = i + 1 < len(tags) and tags[i + 1].startswith("I-")
        if tag != "O" and not inside_next:
            column[i] += ")"
    return column


def srl(out: Path, limit: int | None) -> dict:
    paths, labels = {}, set()  # every tag of both splits: a dev-only tag must be a known label to the reference
    for split in ("train", "dev"):
        ds, _ = read_conllu_propbank_file(SHARED_DATA / "srl_up_en" / f"{split}.conllu")
        sentences: dict[int, list[dict]] = {}
        labels.update(t for ex in ds for t in ex["tags"])
        for ex in ds:
            sentences.setdefault(ex["sentence"], []).append(ex)
        keys = sorted(sentences)
        if split == "train" and limit:
            keys = keys[:limit]
        lines = [f"#begin document (up_{split}); part 0"]
        for k in keys:
            frames = sorted(sentences[k], key=lambda e: e["predicate"])
            lines += _gold_conll_rows(f"up_{split}", frames[0]["tokens"], [bio_to_brackets(f["tags"]) for f in frames])
            lines.append("")
        lines.append("#end document")
        paths[split] = _write(out / split / f"up_{split}.gold_conll", "\n".join(lines) + "\n")
    return {
        "suite": {"data.train_path": paths["train"], "data.dev_path": paths["dev"], "data.format": "conll2012"},
        "reference": {"train": paths["train"].parent, "dev": paths["dev"].parent, "labels": sorted(labels)},
        "notes": [
            "Universal PropBank converted once to CoNLL-2012 columns (one-token argument spans); "
            "both sides read the converted files"
        ],
    }


def _litbank_documents(split: str, limit: int | None) -> list[tuple[str, list[list[str]]]]:
    """LitBank's documents as (name, sentences of rows), the rows with the columns the OntoNotes
    reader parses filled in."""
    documents: list[tuple[str, list[list[str]]]] = []
    for line in (SHARED_DATA / "coref_litbank" / f"{split}.conll").read_text(encoding="utf-8").splitlines():
        if line.startswith("#begin document"):
            if split == "train" and limit and len(documents) == limit:
                break
            documents.append((line.split("(", 1)[1].split(")", 1)[0], [[]]))
        elif line.strip() and not line.startswith("#"):
            c = line.split("\t")
            documents[-1][1][-1].append("\t".join(c[:4] + ["XX", "*", "-", "-", "-", "-", "*", c[-1].strip() or "-"]))
        elif not line.strip() and documents and documents[-1][1][-1]:
            documents[-1][1].append([])
    return [(name, [s for s in sentences if s]) for name, sentences in documents]


def _conll_text(documents: list[tuple[str, list[list[str]]]]) -> str:
    lines = []
    for name, sentences in documents:
        lines.append(f"#begin document ({name}); part 0")
        for rows in sentences:
            lines += [name + row[row.index("\t") :] for row in rows] + [""]
        lines += ["#end document", ""]
    return "\n".join(lines) + "\n"


def coref(out: Path, limit: int | None) -> dict:
    """The suite trains on consecutive windows of ``max_training_sentences`` sentences of every
    training document (``tasks.coref.task.windows``); AllenNLP's reader keeps a document's first
    ``max_sentences`` and drops the rest. So the reference reads the same windows, each written as
    a document of its own; dev is whole documents on both sides."""
    window = CorefConfig().max_training_sentences
    train, dev = _litbank_documents("train", limit), _litbank_documents("dev", None)
    windows = [
        (f"{name}_w{first}", sentences[first : first + window])
        for name, sentences in train
        for first in range(0, len(sentences), window)
    ]
    paths = {
        "train": _write(out / "train.gold_conll", _conll_text(train)),
        "dev": _write(out / "dev.gold_conll", _conll_text(dev)),
        "reference_train": _write(out / f"train.windows{window}.gold_conll", _conll_text(windows)),
    }
    return {
        "suite": {"data.train_path": paths["train"], "data.dev_path": paths["dev"]},
        "reference": {"train": paths["reference_train"], "dev": paths["dev"], "window": window},
        "notes": [
            f"train: the first {limit or 'all'} LitBank training documents "
            f"({sum(len(sentences) for _, sentences in train)} sentences) in windows of {window} sentences on both "
            f"sides (the reference reads its {len(windows)} windows written as documents); dev: all {len(dev)} "
            "documents whole on both sides; the files with the columns the OntoNotes reader parses filled in"
        ],
    }


PREPARE = {"ner": ner, "nli": nli, "sst": sst, "qa": qa, "srl": srl, "coref": coref}
