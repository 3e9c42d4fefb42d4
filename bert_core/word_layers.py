"""A frozen Transformer as a source of word-level layers, like the biLM's (Peters et al. 2018 §3.2:
the task sees every layer, embeddings included, and mixes them; Devlin et al. 2019 §5.3 use BERT's
layers the same way as features).

Words -> pieces -> words: a sentence's words are split by the model's own (fast) tokenizer, each
word on its own (``is_split_into_words``); a word's vector in each layer is its first piece's or the
mean of its pieces' (``pooling``). A word the tokenizer reduces to nothing reads as the unknown
piece. A sentence longer than the model's maximum is read in windows of whole words that overlap
by half a window, and each word is taken from the window where it has the most context (the
largest distance to that window's nearer edge). Each text is read on its own, with the model's
special pieces (``[CLS]``/``[SEP]`` for BERT) around it, as the biLM reads each sentence on its own.

Layers out: ``(L+1, n_words, hidden)`` per sentence: the embedding output and every hidden layer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from suite_common.errors import EncoderError
from suite_common.hashing import new_sha256

POOLINGS = ("first", "mean")
MODEL_FILES = (
    "config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "merges.txt",
    "vocab.json",
    "special_tokens_map.json",
    "spiece.model",
    "sentencepiece.bpe.model",
)


def plan_windows(
    word_spans: list[tuple[int, int]], max_pieces: int
) -> tuple[list[tuple[int, int, int, int]], list[int]]:
    """Windows over one sentence's pieces and the window each word is read from.

    ``word_spans``: each word's pieces ``[start, end)`` (consecutive, starting at 0). A window holds
    whole words, at most ``max_pieces`` pieces (a longer word is cut to its first ``max_pieces``);
    the next window starts at the first word at or after half a window. Returns the windows as
    ``(first_word, end_word, piece_start, piece_end)`` and, per word, the index of its window."""
    n = len(word_spans)
    if n == 0:
        return [], []
    windows, first = [], 0
    while True:
        start = word_spans[first][0]
        end_word = first
        while end_word < n and word_spans[end_word][1] - start <= max_pieces:
            end_word += 1
        end_word = max(end_word, first + 1)  # a single word longer than a window: cut below
        windows.append((first, end_word, start, min(word_spans[end_word - 1][1], start + max_pieces)))
        if end_word >= n:
            break
        half = start + max(1, max_pieces // 2)
        nxt = first + 1
        while nxt < n and word_spans[nxt][0] < half:
            nxt += 1
        first = min(max(nxt, first + 1), end_word)
    choice = []
    for w, (a, b) in enumerate(word_spans):
        best, best_context = None, None
        for k, (fw, ew, ps, pe) in enumerate(windows):
            if fw <= w < ew:
                context = min(a - ps, pe - min(b, pe))
                if best_context is None or context > best_context:
                    best, best_context = k, context
        choice.append(best)
    return windows, choice


def pool_words(hidden: np.ndarray, word_spans: list[tuple[int, int]], pooling: str) -> np.ndarray:
    """``hidden`` (L+1, pieces, D) -> (L+1, words, D): first piece or mean of each word's pieces."""
    if pooling == "first":
        return hidden[:, [a for a, _ in word_spans]]
    if pooling == "mean":
        return np.stack([hidden[:, a:b].mean(axis=1) for a, b in word_spans], axis=1)
    raise EncoderError(f"encoder.pooling must be one of {POOLINGS}, got {pooling!r}")


def model_files_sha256(path: Path) -> str:
    """One digest of the files that decide a model's outputs (weights, configuration, tokenizer)."""
    digest = new_sha256()
    for name in sorted(os.listdir(path)):
        if name in MODEL_FILES or name.endswith((".safetensors", ".bin")):
            from suite_common.hashing import file_sha256

            digest.update(f"{name}:{file_sha256(path / name)}\n".encode())
    return digest.hexdigest()


def resolve_model_dir(model: str, revision: str | None = None) -> Path:
    """A local model directory as it is; a hub name through the local Hugging Face cache (downloaded
    when the hub is reachable). Anything else: one ``EncoderError`` naming it."""
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise EncoderError(f"{path}: no config.json (not a transformers model directory)")
        return path
    if path.exists() or model.startswith((".", "/", "~")) or model.count("/") > 1:
        raise EncoderError(f"encoder.model={model}: no such model directory")
    try:
        from huggingface_hub import snapshot_download

        return Path(
            snapshot_download(model, revision=revision, allow_patterns=["*.json", "*.txt", "*.model", "*.safetensors"])
        )
    except Exception as e:  # noqa: BLE001 - offline, unknown repository, ...: the same message to the user
        raise EncoderError(
            f"encoder.model={model}: not a local directory, and the hub copy could not be "
            f"loaded ({type(e).__name__}); give a model directory"
        ) from None


class TransformerWordEncoder:
    """Sentences (lists of words) in, ``(L+1, n_words, hidden)`` float32 layers out, per sentence."""

    def __init__(self, model_dir: Path, pooling: str = "first", max_length: int | None = None, device: str = "cpu"):
        from transformers import AutoModel, AutoTokenizer

        if pooling not in POOLINGS:
            raise EncoderError(f"encoder.pooling must be one of {POOLINGS}, got {pooling!r}")
        from transformers.utils import logging as hf_logging

        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # a pretraining checkpoint's unused heads (MLM, NSP) are expected
        hf_logging.disable_progress_bar()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
            self.model = AutoModel.from_pretrained(str(model_dir)).to(device).eval()
        except (
            Exception
        ) as e:  # a broken directory reaches transformers' loaders in many forms (safetensors, json, torch)
            raise EncoderError(
                f"{model_dir}: cannot load the model or its tokenizer ({type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''})"
            ) from None
        finally:
            hf_logging.set_verbosity(verbosity)
            hf_logging.enable_progress_bar()
        if not getattr(self.tokenizer, "is_fast", False):
            raise EncoderError(f"{model_dir}: the tokenizer has no fast version (word alignment needs one)")
        self.pooling, self.device = pooling, device
        cfg = self.model.config
        self.num_layers, self.dim = cfg.num_hidden_layers + 1, cfg.hidden_size
        self.prefix_ids, self.suffix_ids = self._special_pieces()
        specials = len(self.prefix_ids) + len(self.suffix_ids)
        limit = min(int(getattr(cfg, "max_position_embeddings", 512)), int(min(self.tokenizer.model_max_length, 1e6)))
        if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
            limit = min(limit, cfg.max_position_embeddings - cfg.pad_token_id - 1)  # positions start after padding
        self.max_length = min(max_length or limit, limit)
        self.max_pieces = self.max_length - specials
        if self.max_pieces < 1:
            raise EncoderError(f"encoder.max_length={max_length}: no room for a piece beside {specials} special ones")
        self.prefix = len(self.prefix_ids)

    def _special_pieces(self) -> tuple[list[int], list[int]]:
        """The pieces the model's template puts before and after a text (``[CLS]`` / ``[SEP]``)."""
        enc = self.tokenizer(["a"], is_split_into_words=True, add_special_tokens=True)
        ids, word_ids = enc["input_ids"], enc.word_ids()
        inside = [p for p, w in enumerate(word_ids) if w is not None]
        if not inside:
            raise EncoderError("the tokenizer maps the word 'a' to no piece; cannot align words")
        return ids[: inside[0]], ids[inside[-1] + 1 :]

    def word_pieces(self, words: list[str]) -> tuple[list[int], list[tuple[int, int]]]:
        """The sentence's piece ids and each word's ``[start, end)`` among them."""
        enc = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False)
        per_word: list[list[int]] = [[] for _ in words]
        for piece, w in zip(enc["input_ids"], enc.word_ids()):
            if w is not None:
                per_word[w].append(piece)
        pieces, spans = [], []
        for mine in per_word:
            mine = mine or [self.tokenizer.unk_token_id]
            spans.append((len(pieces), len(pieces) + len(mine)))
            pieces += mine
        return pieces, spans

    def embed_sentences(
        self, sentences: list[list[str]], batch_size: int = 32, progress: bool = False
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, layers (L+1, n_words, hidden))`` for every sentence, in order."""
        from tqdm import tqdm

        bar = tqdm(total=sum(len(s) for s in sentences), unit="tok", desc="encoder", disable=not progress)
        for start in range(0, len(sentences), batch_size):
            chunk = sentences[start : start + batch_size]
            plans = []
            for words in chunk:
                if not words:
                    raise EncoderError(f"empty sentence at index {start + len(plans)}")
                pieces, spans = self.word_pieces(words)
                windows, choice = plan_windows(spans, self.max_pieces)
                plans.append((pieces, spans, windows, choice))
            flat = [(j, k) for j, plan in enumerate(plans) for k in range(len(plan[2]))]
            states = self._run_windows([plans[j][0][plans[j][2][k][2] : plans[j][2][k][3]] for j, k in flat])
            by_window = {jk: s for jk, s in zip(flat, states)}
            for j, (_pieces, spans, windows, choice) in enumerate(plans):
                out = np.empty((self.num_layers, len(spans), self.dim), np.float32)
                for w, (a, b) in enumerate(spans):
                    k = choice[w]
                    ps, pe = windows[k][2], windows[k][3]
                    local = [(a - ps, min(b, pe) - ps)]
                    out[:, w] = pool_words(by_window[(j, k)], local, self.pooling)[:, 0]
                bar.update(len(spans))
                yield start + j, out
        bar.close()

    def _run_windows(self, windows: list[list[int]]) -> list[np.ndarray]:
        """Each window's pieces with the special ones around them -> its ``(L+1, pieces, D)`` states."""
        inputs = [[*self.prefix_ids, *w, *self.suffix_ids] for w in windows]
        T = max(len(x) for x in inputs)
        ids = torch.full((len(inputs), T), self.tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(inputs), T), dtype=torch.long)
        for r, x in enumerate(inputs):
            ids[r, : len(x)] = torch.tensor(x)
            mask[r, : len(x)] = 1
        hidden = self.window_states(ids, mask).float().cpu().numpy()  # (L+1, B, T, D)
        return [hidden[:, r, self.prefix : self.prefix + len(w)] for r, w in enumerate(windows)]

    def window_states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Piece ids and attention mask (B, T) -> every layer's states (L+1, B, T, D) on the model's device."""
        with torch.inference_mode():
            out = self.model(
                input_ids=ids.to(self.device), attention_mask=mask.to(self.device), output_hidden_states=True
            )
        return torch.stack(out.hidden_states)
