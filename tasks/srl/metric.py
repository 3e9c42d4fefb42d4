"""Labelled argument precision/recall/F1 over all predicates, as the CoNLL-2005 scorer
(srl-eval.pl) counts them: the predicate (V) is not counted; a continuation span C-X joins the
preceding X argument into one discontinuous argument, which is right only if every piece is;
reference arguments R-X are arguments of their own type. Per-role breakdown included."""

from __future__ import annotations

from collections import Counter


def bio_spans(tags: list[str]) -> set[tuple[int, int, str]]:
    """(start, end inclusive, label) of every span; an I- that does not continue a span starts one."""
    spans, start, label = set(), None, None
    for i, tag in enumerate(tags + ["O"]):
        continues = tag.startswith("I-") and label == tag[2:]
        if start is not None and not continues:
            spans.add((start, i - 1, label))
            start = label = None
        if tag != "O" and not continues:
            start, label = i, tag[2:]
    return spans


def arguments(tags: list[str]) -> set[tuple[str, tuple[tuple[int, int], ...]]]:
    """Arguments as the CoNLL-2005 scorer reads them: (type, pieces). A ``C-X`` span continues the
    most recent ``X`` argument (a discontinuous argument), or becomes a plain ``X`` argument when no
    ``X`` precedes it; ``R-X`` is an ordinary type."""
    args: list[list] = []
    last: dict[str, list] = {}
    for start, end, label in sorted(bio_spans(tags)):
        if label.startswith("C-") and label[2:] in last:
            last[label[2:]][1].append((start, end))
            continue
        label = label[2:] if label.startswith("C-") else label
        arg = [label, [(start, end)]]
        args.append(arg)
        last[label] = arg
    return {(label, tuple(pieces)) for label, pieces in args}


def _prf(correct: int, predicted: int, gold: int) -> dict:
    p = 100 * correct / predicted if predicted else 0.0
    r = 100 * correct / gold if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def argument_counts(gold: list[str], pred: list[str]) -> tuple[int, int, int]:
    """One predicate's correct, predicted and gold arguments (the predicate itself not counted)."""
    g = {a for a in arguments(gold) if a[0] != "V"}
    p = {a for a in arguments(pred) if a[0] != "V"}
    return len(g & p), len(p), len(g)


def srl_scores(gold: list[list[str]], pred: list[list[str]]) -> dict:
    counts = {k: Counter() for k in ("correct", "predicted", "gold")}
    for g_tags, p_tags in zip(gold, pred, strict=True):
        g = {a for a in arguments(g_tags) if a[0] != "V"}
        p = {a for a in arguments(p_tags) if a[0] != "V"}
        for name, args in (("gold", g), ("predicted", p), ("correct", g & p)):
            counts[name].update(a[0] for a in args)
    total = _prf(sum(counts["correct"].values()), sum(counts["predicted"].values()), sum(counts["gold"].values()))
    roles = sorted(set(counts["gold"]) | set(counts["predicted"]))
    total["per_role"] = {
        r: {
            **{
                k: round(v, 2) for k, v in _prf(counts["correct"][r], counts["predicted"][r], counts["gold"][r]).items()
            },
            "gold": counts["gold"][r],
        }
        for r in roles
    }
    return total


def bio_to_brackets(tags: list[str]) -> list[str]:
    """BIO tags of one predicate -> CoNLL-2005 bracket cells: ``(ARG0*``, ``*``, ``*)``, ``(V*)``."""
    cells = ["*"] * len(tags)
    for start, end, label in sorted(bio_spans(tags)):
        cells[start] = f"({label}" + cells[start]
        cells[end] = cells[end] + ")"
    return cells


def write_props(path, sentences: list[tuple[list[str], list[int], list[list[str]]]]) -> None:
    """CoNLL-2005 ``props`` file: per token, the predicate word (or ``-``) then one bracketed column
    per predicate (in sentence order); a blank line after each sentence. ``sentences`` holds
    (tokens, predicate indices, BIO tags per predicate)."""
    with open(path, "w", encoding="utf-8") as f:
        for tokens, predicates, tag_lists in sentences:
            order = sorted(range(len(predicates)), key=lambda k: predicates[k])
            columns = [bio_to_brackets(tag_lists[k]) for k in order]
            marked = {predicates[k]: tokens[predicates[k]] for k in order}
            for i in range(len(tokens)):
                f.write("\t".join([marked.get(i, "-")] + [c[i] for c in columns]) + "\n")
            f.write("\n")
