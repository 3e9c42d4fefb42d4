"""SST readers: PTB-style trees, one per line, a label 0-4 on every node (Socher et al. 2013).

The sentence label is the root's. ``binary`` drops neutral (2) and maps 0-1 -> 0, 3-4 -> 1.
``phrases_min_tokens`` (the paper's SST-5 training set, appendix A.8) also emits every phrase
(subtree) with at least that many tokens, as its own example. Default source: the Hugging Face
``sst`` dataset with trees (``dictionary``-free ``ptb`` config); ``data.dir`` reads local files.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from suite_common.errors import DataError as DataFormatError

from ..common.text_files import text_lines

# What separates the parts of a tree, so never part of a leaf. A no-break space (U+00A0) is not among
# them: SST's own training trees hold it inside one token ("8\u00a01\\/2", "2\u00a01\\/2").
TREE_WHITESPACE = frozenset(" \t\n\r\x0b\x0c")


def parse_tree(text: str, where: str):
    """'(3 (2 a) (4 b))' -> (label, children or token)."""
    pos = 0

    def node():
        nonlocal pos
        if text[pos] != "(":
            raise DataFormatError(f"{where}: expected '(' at column {pos + 1}")
        pos += 1
        end = pos
        while end < len(text) and text[end] not in " ()":
            end += 1
        label = text[pos:end]
        if not (label.isascii() and label.isdigit()):  # "４" is a digit to Python, not a label
            raise DataFormatError(f"{where}: bad label {label!r} at column {pos + 1}")
        pos = end
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if text[pos] == "(":
            children = []
            while pos < len(text) and text[pos] == "(":
                children.append(node())
                while pos < len(text) and text[pos] == " ":
                    pos += 1
            result = (int(label), children)
        else:
            end = text.index(")", pos)
            token = text[pos:end]
            if not token or any(c in TREE_WHITESPACE for c in token):
                raise DataFormatError(
                    f"{where}: {'empty token' if not token else f'token with a space {token!r}'} "
                    f"at column {pos + 1} (a leaf is one token)"
                )
            result = (int(label), token)
            pos = end
        if pos >= len(text) or text[pos] != ")":
            raise DataFormatError(f"{where}: unbalanced parentheses")
        pos += 1
        return result

    try:
        tree = node()
    except (IndexError, ValueError) as e:
        if isinstance(e, DataFormatError):
            raise
        raise DataFormatError(f"{where}: malformed tree ({e})") from None
    if text[pos:].strip():
        raise DataFormatError(f"{where}: text after the tree")
    return tree


def leaves(tree) -> list[str]:
    label, body = tree
    return [body] if isinstance(body, str) else [t for child in body for t in leaves(child)]


def subtrees(tree):
    yield tree
    if not isinstance(tree[1], str):
        for child in tree[1]:
            yield from subtrees(child)


def binary_label(label: int) -> int | None:
    return None if label == 2 else int(label > 2)


def read_sst_file(path: str | Path, binary: bool = False, phrases_min_tokens: int | None = None):
    tokens, labels, stats = [], [], {"trees": 0, "neutral_dropped": 0, "phrases": 0}
    for lineno, line in text_lines(path):
        if not line.strip():
            raise DataFormatError(f"{path}:{lineno}: empty line (one tree per line is required)")
        tree = parse_tree(line.strip(), f"{path}:{lineno}")
        stats["trees"] += 1
        nodes = [tree]
        if phrases_min_tokens:
            nodes += [t for t in list(subtrees(tree))[1:] if len(leaves(t)) >= phrases_min_tokens]
            stats["phrases"] += len(nodes) - 1
        for node in nodes:
            label = node[0]
            if not 0 <= label <= 4:
                raise DataFormatError(f"{path}:{lineno}: label {label} outside 0-4")
            if binary:
                label = binary_label(label)
                if label is None:
                    stats["neutral_dropped"] += 1
                    continue
            tokens.append(leaves(node))
            labels.append(label)
    if not tokens:
        raise DataFormatError(f"{path}: no examples")
    return datasets.Dataset.from_dict({"tokens": tokens, "label": labels}), stats


def from_hf_sst(ds: datasets.Dataset, where: str, binary: bool = False) -> tuple[datasets.Dataset, dict]:
    """The hub copy's ``ptb`` configuration (one ``ptb_tree`` string per sentence) as the reader's rows."""
    rows = [read_tree_line(t, f"{where}:{i + 1}", binary) for i, t in enumerate(ds["ptb_tree"])]
    kept = [r for r in rows if r is not None]
    return (
        datasets.Dataset.from_dict({"tokens": [r[0] for r in kept], "label": [r[1] for r in kept]}),
        {"trees": len(rows), "neutral_dropped": len(rows) - len(kept)},
    )


def read_tree_line(text: str, where: str, binary: bool):
    tree = parse_tree(text.strip(), where)
    label = binary_label(tree[0]) if binary else tree[0]
    return None if label is None else (leaves(tree), label)
