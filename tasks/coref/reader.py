"""Coreference data in the CoNLL-2012 layout (Peters et al. 2018 §4 "Coreference resolution"):
OntoNotes ``*gold_conll`` files as they are, and LitBank's tab-separated copy.

A file holds documents between ``#begin document (<id>); part <n>`` (the part may be missing)
and ``#end document``; one token per line (whitespace-separated columns: document id, part, token
index, token, ...; the coreference column last; a minimal line has only the document id and the
coreference column), a blank line between sentences. The coreference column is ``-`` or ``_`` for
none, else marks, ``|``-joined or stacked (``(1(3``): ``(12`` opens a mention of cluster 12,
``12)`` closes the most recent open mention of cluster 12, ``(12)`` is a one-token mention. As the
reference scorer (``scorer.pl``) reads a line: its one-token mentions first, then its openings,
then its closings. Mentions may nest and overlap; clusters are per document (per ``#begin
document ... part``).

Each document becomes one example: ``doc_key`` (``<id>_<part>``), ``sentences`` (token lists),
``clusters`` (per cluster, its mentions as ``[start, end]`` document token offsets, end
inclusive; sorted), and ``columns`` (every token line's columns but the last, to write
predictions back in the same layout). Malformed input is an error naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import datasets

from suite_common.errors import DataError

from ..common.text_files import text_lines

_BEGIN = re.compile(r"#begin document \((.*)\);?\s*(?:part\s+(\S+))?\s*$")
_MARKS = (("single", re.compile(r"\((\d+)\)")), ("open", re.compile(r"\((\d+)")), ("close", re.compile(r"(\d+)\)")))


def parse_coref_column(value: str, where: str) -> list[tuple[str, int]]:
    """``3)|(12)|(7`` or ``(1(3`` -> its marks in the reference scorer's order: one-token mentions,
    then openings, then closings (``[("single", 12), ("open", 7), ("close", 3)]``)."""
    if value in ("-", "_"):
        return []
    out, rest = [], value
    for kind, pattern in _MARKS:
        out += [(kind, int(n)) for n in pattern.findall(rest)]
        rest = pattern.sub("|", rest)
    if rest.strip("|"):
        raise DataError(f"{where}: malformed coreference column {value!r} (left over: {rest.strip('|')!r})")
    return out


class _Document:
    def __init__(self, doc_id: str, part: str | None, where: str):
        self.doc_id, self.part, self.where = doc_id, part, where
        self.key = f"{doc_id}_{part}" if part is not None else doc_id
        self.order: list[int] = []  # cluster ids in order of their first mark (the scorer's entity order)
        self.sentences: list[list[str]] = [[]]
        self.columns: list[list[str]] = []
        self.open: dict[int, list[tuple[int, str]]] = {}  # cluster -> stack of (start, where)
        self.clusters: dict[int, list[list[int]]] = {}

    def add_token(self, cols: list[str], where: str) -> None:
        position = len(self.columns)
        self.sentences[-1].append(cols[3] if len(cols) >= 5 else "-")  # a minimal line has no token
        self.columns.append(cols[:-1])
        for kind, cluster in parse_coref_column(cols[-1], where):
            if cluster not in self.order:
                self.order.append(cluster)
            if kind == "single":
                self.clusters.setdefault(cluster, []).append([position, position])
            elif kind == "open":
                self.open.setdefault(cluster, []).append((position, where))
            else:
                if not self.open.get(cluster):
                    raise DataError(
                        f"{where}: '{cluster})' closes a mention of cluster {cluster} that was never opened"
                    )
                start, _ = self.open[cluster].pop()
                self.clusters.setdefault(cluster, []).append([start, position])

    def end_sentence(self) -> None:
        if self.sentences[-1]:
            self.sentences.append([])

    def finish(self, where: str) -> dict:
        for cluster, stack in self.open.items():
            if stack:
                raise DataError(
                    f"{stack[-1][1]}: '({cluster}' is never closed before the end of document {self.key} ({where})"
                )
        sentences = [s for s in self.sentences if s]
        if not sentences:
            raise DataError(f"{self.where}: document {self.key} has no tokens")
        clusters = [sorted(mentions) for _, mentions in sorted(self.clusters.items())]
        in_order = [self.clusters[c] for c in self.order if c in self.clusters]  # mentions as completed
        return {
            "doc_key": self.key,
            "doc_id": self.doc_id,
            "part": self.part,
            "sentences": sentences,
            "clusters": clusters,
            "clusters_in_file_order": in_order,
            "columns": self.columns,
        }


def read_conll2012_coref(path: str | Path) -> tuple[datasets.Dataset, dict]:
    """Every document of a CoNLL-2012 coreference file; stats count documents, tokens, mentions."""
    path = Path(path)
    documents, doc = [], None
    for lineno, line in text_lines(path):
        where = f"{path}:{lineno}"
        text = line.strip()
        if text.startswith("#begin document"):
            if doc is not None:
                raise DataError(f"{where}: '#begin document' inside document {doc.key} (no '#end document')")
            m = _BEGIN.match(text)
            if not m:
                raise DataError(f"{where}: expected '#begin document (<id>); part <n>'")
            doc = _Document(m.group(1), m.group(2), where)
        elif text.startswith("#end document"):
            if doc is None:
                raise DataError(f"{where}: '#end document' without '#begin document'")
            documents.append(doc.finish(where))
            doc = None
        elif not text:
            if doc is not None:
                doc.end_sentence()
        elif text.startswith("#"):
            continue
        else:
            if doc is None:
                raise DataError(f"{where}: a token line outside '#begin document' ... '#end document'")
            cols = text.split()
            if len(cols) < 2:
                raise DataError(f"{where}: expected at least 2 columns (document, ..., coreference), got {len(cols)}")
            doc.add_token(cols, where)
    if doc is not None:
        raise DataError(f"{path}: document {doc.key} has no '#end document'")
    if not documents:
        raise DataError(f"{path}: no documents")
    stats = {
        "documents": len(documents),
        "tokens": sum(len(d["columns"]) for d in documents),
        "mentions": sum(len(m) for d in documents for m in d["clusters"]),
        "clusters": sum(len(d["clusters"]) for d in documents),
    }
    return datasets.Dataset.from_list(documents), stats


def write_conll2012_coref(path: str | Path, documents, predicted_clusters: list[list[list[int]]]) -> Path:
    """The documents as read (``columns``, sentence breaks) with ``predicted_clusters`` (per
    document, clusters of ``[start, end]`` mentions) in the last column: what the reference
    scorer (``scorer.pl all key response``) reads."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        for doc, clusters in zip(documents, predicted_clusters, strict=True):
            marks: dict[int, list[str]] = {}
            for cluster_id, mentions in enumerate(clusters):
                for start, end in sorted(mentions, key=lambda m: (m[0], -m[1])):
                    if start == end:
                        marks.setdefault(start, []).append(f"({cluster_id})")
                    else:
                        marks.setdefault(start, []).append(f"({cluster_id}")
                        marks.setdefault(end, []).append(f"{cluster_id})")
            doc_id, part = (doc["doc_id"], doc["part"]) if doc.get("doc_id") else doc["doc_key"].rsplit("_", 1)
            f.write(
                f"#begin document ({doc_id}); part {part}\n" if part is not None else f"#begin document ({doc_id});\n"
            )
            position = 0
            for sentence in doc["sentences"]:
                for _ in sentence:
                    f.write("\t".join(doc["columns"][position] + ["|".join(marks.get(position, [])) or "-"]) + "\n")
                    position += 1
                f.write("\n")
            f.write("#end document\n")
    return path
