"""Pretraining instances for BERT (Devlin et al. 2019 §3.1): sentence pairs for masked LM and
next-sentence prediction, read from a corpus of plain-text files in the biLM's format (one
whitespace-tokenized sentence per line).

Each file is one document (``../shared/data/lm_corpus`` has one file per source, its sentences in
their original order). An instance packs consecutive sentences of a document up to a target length
in pieces (``max_length - 3``; with probability ``short_prob`` a shorter random target, so that
the model also sees short inputs), splits them at a random sentence boundary into segment A and
segment B, and with probability 1/2 replaces B by a stretch of sentences starting anywhere in
another document (label 1 = "random", as ``BertForPreTraining`` counts it; 0 = "is next"); a
corpus of one file takes it from elsewhere in that file, never from next to A. The
sentences a random B displaced are read again by the next instance. A pair that is too long is cut
one piece at a time from the longer segment, at its front or back at random.

The documents are interleaved: each next instance comes from a document drawn with probability
proportional to the sentences it has left, so every stretch of batches mixes the sources in their
corpus proportions. Sentences are read through a line-offset index (``elmo_core.pretraining.lm_data``), never
held in memory. The order is a pure function of (files, seed, epoch): a run resumes by skipping
instances.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from elmo_core.pretraining.lm_data import CorpusIndex


class FileDocument:
    """One corpus file as a random-access list of sentences (through the shared offset index)."""

    def __init__(self, path: Path, index: CorpusIndex):
        self.path, self.index, self.offsets = path, index, index.offsets(path)

    def __len__(self) -> int:
        return len(self.offsets)

    def sentence(self, i: int) -> list[str]:
        return self.index.sentence_at(self.path, self.offsets[i])

    def close(self) -> None:
        pass


class ListDocument:
    """Sentences already in memory (the held-out set, one document per source; tests)."""

    def __init__(self, sentences: Sequence[list[str]]):
        self.sentences = sentences

    def __len__(self) -> int:
        return len(self.sentences)

    def sentence(self, i: int) -> list[str]:
        return self.sentences[i]

    def close(self) -> None:
        pass


@dataclass
class Instance:
    segment_a: list[int]
    segment_b: list[int]
    is_random_next: bool
    document: int  # where segment A comes from


class PairStream:
    """MLM + NSP instances of ``documents`` (``FileDocument``/``ListDocument``); ``pieces`` maps a
    sentence's words to WordPiece ids without special tokens."""

    def __init__(
        self,
        documents: list,
        pieces,
        max_length: int = 128,
        seed: int = 0,
        short_prob: float = 0.1,
        random_next_prob: float = 0.5,
    ):
        if max_length < 8:
            raise ValueError(f"max_length={max_length}: too short for [CLS] A [SEP] B [SEP]")
        if not documents or sum(len(d) for d in documents) < 4:
            raise ValueError("next-sentence prediction needs a corpus of at least four sentences")
        self.documents, self.pieces, self.max_length = documents, pieces, max_length
        self.seed, self.short_prob, self.random_next_prob = seed, short_prob, random_next_prob

    def instances(self, epoch: int = 0, skip: int = 0) -> Iterator[Instance]:
        """The epoch's instances in order, the first ``skip`` of them passed over (to resume)."""
        rng = random.Random(f"{self.seed}-{epoch}-pairs")
        cursors = [0] * len(self.documents)
        produced = 0
        while True:
            left = [len(d) - c for d, c in zip(self.documents, cursors)]
            total = sum(left)
            if total == 0:
                return
            k = self._draw(rng, left, total)
            instance, cursors[k] = self._next_instance(rng, k, cursors[k])
            if instance is None:
                continue
            if produced >= skip:
                yield instance
            produced += 1

    @staticmethod
    def _draw(rng: random.Random, left: list[int], total: int) -> int:
        point = rng.randrange(total)
        for k, n in enumerate(left):
            if point < n:
                return k
            point -= n
        raise AssertionError("unreachable")

    def _next_instance(self, rng: random.Random, k: int, cursor: int) -> tuple[Instance | None, int]:
        doc, budget = self.documents[k], self.max_length - 3
        target = rng.randint(2, budget) if rng.random() < self.short_prob else budget
        chunk, length = [], 0
        while cursor < len(doc) and length < target:
            ids = self.pieces(doc.sentence(cursor))
            cursor += 1
            if ids:
                chunk.append(ids)
                length += len(ids)
        if not chunk:
            return None, cursor
        a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
        segment_a = [i for s in chunk[:a_end] for i in s]
        is_random = len(chunk) == 1 or rng.random() < self.random_next_prob
        if is_random:
            cursor -= len(chunk) - a_end  # the displaced sentences are read again
            a_start = cursor - a_end
            segment_b = self._random_segment(rng, k, max(1, target - len(segment_a)), (a_start, a_start + a_end))
        else:
            segment_b = [i for s in chunk[a_end:] for i in s]
        if not segment_a or not segment_b:
            return None, cursor
        self._truncate(rng, segment_a, segment_b, budget)
        return Instance(segment_a, segment_b, is_random, k), cursor

    def _random_segment(self, rng: random.Random, k: int, target: int, a_span: tuple[int, int]) -> list[int]:
        """Sentences from any document but ``k``; with one document, from outside A and its next sentence."""
        if len(self.documents) > 1:
            other = rng.randrange(len(self.documents) - 1)
            other += other >= k
            doc = self.documents[other]
            start = rng.randrange(len(doc))
            end = len(doc)
        else:
            doc = self.documents[k]
            for _ in range(20):
                start = rng.randrange(len(doc))
                if not a_span[0] - 1 <= start <= a_span[1]:
                    break
            else:
                return []  # no sentence away from A: the instance is dropped
            end = a_span[0] - 1 if start < a_span[0] else len(doc)  # never runs on into A
        segment: list[int] = []
        for i in range(start, end):
            segment += self.pieces(doc.sentence(i))
            if len(segment) >= target:
                break
        return segment

    @staticmethod
    def _truncate(rng: random.Random, a: list[int], b: list[int], budget: int) -> None:
        while len(a) + len(b) > budget:
            longer = a if len(a) > len(b) else b
            del longer[0 if rng.random() < 0.5 else -1]


def encode_pair(instance: Instance, cls_id: int, sep_id: int) -> dict:
    """``[CLS] A [SEP] B [SEP]`` with segment ids 0/1 and the NSP label (1 = B is random)."""
    ids = [cls_id, *instance.segment_a, sep_id, *instance.segment_b, sep_id]
    types = [0] * (len(instance.segment_a) + 2) + [1] * (len(instance.segment_b) + 1)
    return {"input_ids": ids, "token_type_ids": types, "next_sentence_label": int(instance.is_random_next)}


def batches(
    stream: PairStream, collator, batch_size: int, epoch: int = 0, skip_batches: int = 0
) -> Iterator[dict[str, torch.Tensor]]:
    """Padded, masked batches (``collator``: ``bert_pretrain.SeededMasking``). Skipped batches
    are not masked, so the masking generator's state must be restored with the position."""
    tokenizer = collator.tokenizer
    pending = []
    for instance in stream.instances(epoch, skip=skip_batches * batch_size):
        pending.append(encode_pair(instance, tokenizer.cls_token_id, tokenizer.sep_token_id))
        if len(pending) == batch_size:
            yield collator(pending)
            pending = []
    if pending:
        yield collator(pending)
