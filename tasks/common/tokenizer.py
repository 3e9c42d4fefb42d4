"""The one tokenizer the project uses for raw (untokenized) text: SQuAD contexts and questions,
NLI sentences. It follows the Penn Treebank conventions of the biLM's training text (clitics
``'s 're 've 'm 'll 'd`` and ``n't`` split off, punctuation separate, abbreviations such as
``U.S.`` and hyphenated words kept whole) and returns character offsets, so an answer span in
tokens maps back to the exact substring of the original text."""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""
    (?:[A-Za-z]\.){2,}            # abbreviations: U.S., e.g.
  | \w+(?=n't\b)                  # "does" of "doesn't", "ca" of "can't" (PTB)
  | n't\b
  | '(?:s|re|ve|m|ll|d)\b         # clitics
  | \d+(?:[.,:]\d+)+              # 1,000.50  3:45
  | \w+(?:-\w+)*                  # words, hyphenated words
  | \S                            # any other character on its own
""",
    re.VERBOSE | re.IGNORECASE,
)


def tokenize_with_offsets(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) with ``text[start:end] == token``."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def tokenize(text: str) -> list[str]:
    return [m.group() for m in _TOKEN.finditer(text)]
