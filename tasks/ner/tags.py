"""Tag-scheme conversions for span tagging (CoNLL-2003 is IOB1; the CRF is trained on BIOUL,
as in the paper's NER baseline, appendix A.7)."""

from __future__ import annotations


def iob1_to_bio(tags: list[str]) -> list[str]:
    """IOB1 (B- only between two same-type spans) -> BIO/IOB2 (every span starts with B-)."""
    out, prev = [], "O"
    for tag in tags:
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out


def bio_to_iob1(tags: list[str]) -> list[str]:
    """BIO -> IOB1: a span starts with I- unless it directly follows a span of the same type."""
    out, prev = [], "O"
    for tag in tags:
        if tag.startswith("B-") and not (prev != "O" and prev[2:] == tag[2:]):
            tag = "I-" + tag[2:]
        out.append(tag)
        prev = tag
    return out


def bio_to_bioul(tags: list[str]) -> list[str]:
    out = []
    for i, tag in enumerate(tags):
        nxt = tags[i + 1] if i + 1 < len(tags) else "O"
        continues = nxt.startswith("I-") and nxt[2:] == tag[2:]
        if tag.startswith("B-"):
            out.append(tag if continues else "U-" + tag[2:])
        elif tag.startswith("I-"):
            out.append(tag if continues else "L-" + tag[2:])
        else:
            out.append(tag)
    return out


def bioul_to_bio(tags: list[str]) -> list[str]:
    """Decoded BIOUL -> BIO; a stray I-/L- after O (only possible without constraints) starts a span."""
    out, prev = [], "O"
    for tag in tags:
        kind, label = (tag[0], tag[2:]) if tag != "O" else ("O", "")
        if kind in "BU" or (kind in "IL" and (prev == "O" or prev[2:] != label or prev[0] in "LU")):
            out.append("B-" + label)
        elif kind in "IL":
            out.append("I-" + label)
        else:
            out.append("O")
        prev = tag
    return out


def allowed_transitions(labels: list[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) of BIOUL tags that may follow each other; START/END handled by the caller."""

    def ok(a: str, b: str) -> bool:
        ka, la = (a[0], a[2:]) if a != "O" else ("O", "")
        kb, lb = (b[0], b[2:]) if b != "O" else ("O", "")
        if ka in "BI":
            return kb in "IL" and la == lb
        return kb in "OBU"

    return [(i, j) for i, a in enumerate(labels) for j, b in enumerate(labels) if ok(a, b)]


def can_start(tag: str) -> bool:
    return tag == "O" or tag[0] in "BU"


def can_end(tag: str) -> bool:
    return tag == "O" or tag[0] in "LU"
