"""Character ids for the biLM's context-insensitive token encoder (Peters et al. 2018, §3.1;
Józefowicz et al. 2016 character CNN input).

Every token becomes ``MAX_CHARS`` (50) integers in ``[0, 262)``:

* the token's UTF-8 bytes (0..255), truncated to 48 bytes so that the begin-of-word and
  end-of-word markers always fit (truncation is on bytes, so a multi-byte character can be cut,
  exactly as the original implementation does);
* 256 / 257 = begin / end of sentence (the ``<S>`` / ``</S>`` tokens, a single pseudo-character);
* 258 / 259 = begin / end of word, 260 = padding inside a token;
* all of the above shifted by +1, so that id 0 means "no token here" (batch padding). The original
  weights file stores 261 character embeddings; the extra all-zero row 0 is added at load time.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

MAX_CHARS = 50
N_CHARACTERS = 262  # 256 bytes + 5 markers + the 0 padding id

BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260

BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"


def _marker_ids(marker: int, max_chars: int) -> list[int]:
    ids = [PAD_CHAR] * max_chars
    ids[0], ids[1], ids[2] = BOW_CHAR, marker, EOW_CHAR
    return [i + 1 for i in ids]


def token_to_ids(token: str, max_chars: int = MAX_CHARS) -> list[int]:
    """The ``max_chars`` character ids (already shifted by +1) of one token."""
    if token == BOS_TOKEN:
        return _marker_ids(BOS_CHAR, max_chars)
    if token == EOS_TOKEN:
        return _marker_ids(EOS_CHAR, max_chars)
    raw = token.encode("utf-8", "ignore")[: max_chars - 2]
    ids = [PAD_CHAR] * max_chars
    ids[0] = BOW_CHAR
    ids[1 : 1 + len(raw)] = raw
    ids[1 + len(raw)] = EOW_CHAR
    return [i + 1 for i in ids]


def batch_to_ids(sentences: Sequence[Sequence[str]], max_chars: int = MAX_CHARS) -> torch.Tensor:
    """``(B, T, max_chars)`` LongTensor of character ids; rows past a sentence's end are all 0.

    Sentence boundary tokens are *not* added here: the biLM adds ``<S>``/``</S>`` itself.
    """
    if isinstance(sentences, str) or (len(sentences) and isinstance(sentences[0], str)):
        raise TypeError("batch_to_ids expects a list of token lists, e.g. [['Hello', 'world']]")
    longest = max((len(s) for s in sentences), default=0)
    out = torch.zeros(len(sentences), longest, max_chars, dtype=torch.long)
    for i, sentence in enumerate(sentences):
        if sentence:
            out[i, : len(sentence)] = torch.tensor([token_to_ids(t, max_chars) for t in sentence])
    return out


def boundary_ids(max_chars: int = MAX_CHARS) -> tuple[torch.Tensor, torch.Tensor]:
    """Character ids of ``<S>`` and ``</S>``, each ``(max_chars,)``."""
    return (torch.tensor(token_to_ids(BOS_TOKEN, max_chars)), torch.tensor(token_to_ids(EOS_TOKEN, max_chars)))
