"""Stateless biLM inference with sentences laid end to end in a fixed number of LSTM rows.

Peters et al. (2018, §3.4) run the biLM over sentences; stateless inference starts every sentence
from a zero LSTM state. Batched one sentence per row, the rows of a batch finish at different
steps, and the last steps run on a few rows while still reading the whole recurrent weight
(4096 x 2048 per layer and direction on the paper model). Here ``rows`` rows each hold several
sentences one after another, the state is reset to zero at every sentence start, and the
sentences are assigned longest first to the currently shortest row, so all rows end within one
sentence of each other and nearly every step runs on all rows. The backward LSTMs read each
sentence from its end within the same layout. The result equals ``BiLM.forward`` with a zero
state, sentence by sentence (up to float rounding: products over different row counts).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import torch

from suite_common.errors import ConfigError

from .bilm import BiLMOutput
from .cpu_speedups import run_side_by_side


@dataclass
class RowLayout:
    """Where every token goes when ``N`` sentences (padded to ``T``) are laid out in rows.

    ``forward_index``/``backward_index``: for each position of the packed (time-major) data,
    the flat token position ``sentence * T + t`` it reads, for the forward LSTMs and for the
    backward ones (each sentence reversed). ``batch_sizes``: active rows per step (rows sorted by
    decreasing length). ``resets``: step -> (rows at that step, 1) multiplier, 0 where a sentence
    starts (the step's state is zeroed for those rows)."""

    forward_index: torch.Tensor
    backward_index: torch.Tensor
    batch_sizes: list[int]
    resets: dict[int, torch.Tensor]
    rows: int


def row_layout(lengths: list[int], rows: int, T: int) -> RowLayout:
    """Assign sentences (of the given lengths, each <= ``T``) to at most ``rows`` rows."""
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    rows = min(rows, len(lengths))
    heap = [(0, r) for r in range(rows)]
    members: list[list[int]] = [[] for _ in range(rows)]
    for s in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        total, r = heapq.heappop(heap)
        members[r].append(s)
        heapq.heappush(heap, (total + lengths[s], r))
    totals = [sum(lengths[s] for s in m) for m in members]
    order = sorted(range(rows), key=lambda r: -totals[r])
    steps = totals[order[0]]
    forward = np.full((rows, steps), -1, dtype=np.int64)
    backward = np.full((rows, steps), -1, dtype=np.int64)
    starts = np.zeros((rows, steps), dtype=bool)
    for row, r in enumerate(order):
        t = 0
        for s in members[r]:
            n = lengths[s]
            forward[row, t : t + n] = s * T + np.arange(n)
            backward[row, t : t + n] = s * T + np.arange(n - 1, -1, -1)
            starts[row, t] = t > 0
            t += n
    valid = (forward >= 0).T  # (steps, rows): a prefix of the rows at every step
    batch_sizes = valid.sum(axis=1).tolist()
    resets = {
        t: torch.from_numpy(~starts[: batch_sizes[t], t]).float().unsqueeze(1)
        for t in range(steps)
        if starts[:, t].any()
    }
    return RowLayout(torch.from_numpy(forward.T[valid]), torch.from_numpy(backward.T[valid]), batch_sizes, resets, rows)


def forward_in_rows(bilm, char_ids: torch.Tensor, rows: int) -> BiLMOutput:
    """``bilm.forward(char_ids)`` with a zero initial state, computed on ``rows`` rows."""
    words, lengths = words_in_rows(bilm, char_ids, rows)
    mask = torch.arange(char_ids.shape[1], device=words.device) < lengths.to(words.device).unsqueeze(1)
    layers = words.new_zeros(words.shape[0], *mask.shape, words.shape[2])
    layers[:, mask] = words  # the mask's True positions run sentence by sentence, like ``words``
    return BiLMOutput(layers=layers, mask=mask)


def words_in_rows(bilm, char_ids: torch.Tensor, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The stateless L+1 layers of every word, without padding: ``(L+1, n_words, 2P)`` with the
    words of sentence 0 first, then sentence 1, ...; and the sentence lengths ``(N,)``."""
    if bilm.stateful:
        raise ConfigError("forward_in_rows is stateless; a stateful biLM carries states per batch row")
    if char_ids.dim() != 3 or char_ids.shape[-1] != bilm.opts.max_characters_per_token:
        raise ValueError(
            f"expected character ids of shape (batch, tokens, "
            f"{bilm.opts.max_characters_per_token}), got {tuple(char_ids.shape)}"
        )
    with_bounds, lengths = bilm.add_boundaries(char_ids)
    tokens = bilm.embed_tokens(with_bounds, lengths)
    N, T, P = tokens.shape
    layout = row_layout(lengths.tolist(), rows, T)
    flat = tokens.reshape(N * T, P)
    device = tokens.device
    L = bilm.opts.n_layers
    state = bilm.zero_state(layout.rows, device)
    resets = {t: m.to(device) for t, m in layout.resets.items()}

    # the first layers' input-to-gate products depend only on the word: computed once per type
    types, type_of_token = torch.unique(with_bounds.view(N * T, -1), dim=0, return_inverse=True)
    first_of_type = torch.full((types.shape[0],), N * T, dtype=torch.long, device=device)
    first_of_type.scatter_reduce_(0, type_of_token, torch.arange(N * T, device=device), "amin")
    values = flat.index_select(0, first_of_type)

    # outputs go straight into the result; a packed position is copied if it holds a word (not
    # <S> or </S>), to the word's place: sentence s's words start at offsets[s]
    n_words = (lengths - 2).cpu()
    offsets = torch.cumsum(n_words, 0) - n_words
    sentence, position = layout.forward_index // T, layout.forward_index % T
    is_word = (position >= 1) & (position <= n_words[sentence])
    words = torch.nonzero(is_word).squeeze(1).to(device)
    word_positions = torch.arange(N * T).view(N, T)[:, 1:-1][torch.arange(T - 2) < n_words.unsqueeze(1)]
    result = tokens.new_empty(L + 1, int(n_words.sum()), 2 * P)
    result[0, :, :P] = flat.index_select(0, word_positions.to(device))
    result[0, :, P:] = result[0, :, :P]

    def direction(d: int) -> None:
        index = layout.forward_index if d == 0 else layout.backward_index
        outputs, _ = bilm.run_packed(
            d,
            flat.index_select(0, index.to(device)),
            layout.batch_sizes,
            state[d * L : (d + 1) * L],
            resets,
            distinct=(values, type_of_token.index_select(0, index.to(device))),
        )
        word_index = index[is_word]  # flat positions sentence * T + t
        target = (offsets[word_index // T] + word_index % T - 1).to(device)
        for k, out in enumerate(outputs):
            result[k + 1, :, d * P : (d + 1) * P].index_copy_(0, target, out.index_select(0, words))

    if device.type == "cpu" and not torch.is_grad_enabled() and torch.get_num_threads() >= 2:
        run_side_by_side(lambda: direction(0), lambda: direction(1))
    else:
        direction(0), direction(1)
    return result, n_words
