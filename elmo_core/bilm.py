"""The bidirectional language model of Peters et al. (2018), §3.1 and §3.4.

Token encoder (context-insensitive x_k, ``char_cnn.py``): character embeddings -> 1-D convolutions
with max-pooling over characters -> ``n_highway`` highway layers -> projection to ``projection_dim``.
Context encoder: L layers of forward and, separately, backward LSTMs with a projection
(``dim`` cells, ``projection_dim`` outputs), cell and projection clipping, and an optional residual
connection from layer 1 upwards. The two directions share the token encoder (and, in training,
the softmax).

Parameters are kept in the original implementation's layout (TensorFlow ``LSTMCell``): one
kernel acting on ``[x; h]`` split here into an input part ``w_x`` and a recurrent part ``w_h``,
gate order (input, candidate, forget, output), and a forget-gate bias of +1 added at run time.

``BiLM.forward`` adds ``<S>``/``</S>`` around every sentence, runs both directions and returns the
L+1 layers with the boundaries removed: layer 0 is the token representation duplicated to
``2*projection_dim``, layer j is ``[forward_j; backward_j]``.

Speed (inference): sentences are packed by length (no work on padding), the input-to-gate
products are computed for many steps at once, the token encoder output is cached per word type
(it depends only on the characters), and the step loop runs without autograd with in-place gate
nonlinearities and a pre-packed recurrent weight (``cpu_speedups``). On a CPU with two or more
threads the forward and the backward LSTMs run at the same time. The embed path
(``embed.embed_sentences``, used by the embed command and the task activation cache) goes
through ``row_packing``, which builds on this module and lays several sentences end to end per
LSTM row; training goes through ``lm_fast_step``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .char_cnn import CharCNN
from .characters import boundary_ids
from .cpu_speedups import StepProduct, run_side_by_side
from .options import BiLMOptions


class ProjectedLSTM(nn.Module):
    """One direction of one layer: LSTM with projection, cell clip and projection clip."""

    XW_BLOCK_ROWS = 1024  # inference: rows per input-to-gate product

    def __init__(self, input_dim: int, cell_dim: int, proj_dim: int, cell_clip: float | None, proj_clip: float | None):
        super().__init__()
        self.cell_dim, self.proj_dim = cell_dim, proj_dim
        self.cell_clip, self.proj_clip = cell_clip, proj_clip
        self.w_x = nn.Parameter(torch.empty(input_dim, 4 * cell_dim))
        self.w_h = nn.Parameter(torch.empty(proj_dim, 4 * cell_dim))
        self.bias = nn.Parameter(torch.zeros(4 * cell_dim))
        self.w_p = nn.Parameter(torch.empty(cell_dim, proj_dim))
        forget = torch.zeros(4 * cell_dim)
        forget[2 * cell_dim : 3 * cell_dim] = 1.0  # gate order i, j, f, o; forget bias +1 at run time
        self.register_buffer("forget_bias", forget, persistent=False)
        self._recurrent_product = StepProduct()  # h @ w_h in inference
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for w in (self.w_x, self.w_h, self.w_p):
            nn.init.xavier_uniform_(w)
        nn.init.zeros_(self.bias)

    def forward(
        self,
        data: torch.Tensor,
        batch_sizes: list[int],
        h: torch.Tensor,
        c: torch.Tensor,
        resets: dict[int, torch.Tensor] | None = None,
        distinct: tuple[torch.Tensor, torch.Tensor] | None = None,
    ):
        """Run over packed data (rows of step t are ``data[offset:offset+batch_sizes[t]]``).

        ``h``/``c`` are the initial states of all rows (sorted by decreasing length); returns the
        packed outputs and the final state of every row (its state after its own last step).
        ``resets`` maps a step to a ``(batch_sizes[t], 1)`` 0/1 multiplier applied to the state
        before that step (0 where a new sentence starts in that row). ``distinct=(values,
        index)``: ``data`` equals ``values[index]`` (used without autograd to compute the
        input-to-gate product once per distinct row).
        """
        needs_grad = torch.is_grad_enabled() and any(
            t.requires_grad for t in (data, h, c, self.w_x, self.w_h, self.w_p, self.bias)
        )
        if needs_grad:
            # split (not slice) the per-step rows: autograd then joins the gradients with one
            # concatenation instead of a full-size zero tensor per step
            step, xws = (
                self._training_step,
                torch.addmm(self.bias + self.forget_bias, data, self.w_x).split(batch_sizes),
            )
        else:
            step = functools.partial(self._inference_step, bias=self.bias + self.forget_bias)
            xws = self._input_products_in_blocks(data, batch_sizes, distinct)
        outputs, rows = [], h.shape[0]
        for t, (bs, xw_t) in enumerate(zip(batch_sizes, xws)):
            h_prev, c_prev = (h, c) if bs == rows else (h[:bs], c[:bs])
            if resets and t in resets:
                h_prev, c_prev = h_prev * resets[t], c_prev * resets[t]
            h_new, c_new = step(xw_t, h_prev, c_prev, rows)
            outputs.append(h_new)
            if bs < rows:
                h, c = torch.cat([h_new, h[bs:]]), torch.cat([c_new, c[bs:]])
            else:
                h, c = h_new, c_new
        return torch.cat(outputs), h, c

    def _input_products_in_blocks(
        self, data: torch.Tensor, batch_sizes: list[int], distinct: tuple[torch.Tensor, torch.Tensor] | None = None
    ):
        """Yield ``x_t @ w_x`` step by step, computed for about ``XW_BLOCK_ROWS`` rows of
        consecutive steps at a time into one reused buffer (inference: each step's rows are used
        before the next block overwrites them). Large products stay efficient, and memory stays
        at one block instead of all tokens x 4 cells; the bias is added in ``_inference_step``.

        ``distinct=(values, index)`` says that ``data`` is ``values[index]`` (the first layer's
        input is the token layer, one row per word type): the product is then computed once per
        distinct row and gathered."""
        table = values_index = None
        if distinct is not None:
            values, values_index = distinct
            table = values @ self.w_x
        buffer = data.new_empty(
            min(data.shape[0], max(self.XW_BLOCK_ROWS, max(batch_sizes, default=0))), 4 * self.cell_dim
        )
        t = offset = 0
        while t < len(batch_sizes):
            u, n = t, 0
            while u < len(batch_sizes) and n + batch_sizes[u] <= buffer.shape[0]:
                n, u = n + batch_sizes[u], u + 1
            if table is None:
                block = torch.mm(data[offset : offset + n], self.w_x, out=buffer[:n])
            else:
                block = torch.index_select(table, 0, values_index[offset : offset + n], out=buffer[:n])
            yield from block.split(batch_sizes[t:u])
            t, offset = u, offset + n

    def _training_step(self, xw_t, h_prev, c_prev, full_rows):
        gates = torch.addmm(xw_t, h_prev, self.w_h)
        i, j, f, o = gates.chunk(4, dim=1)
        c_new = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(j)
        if self.cell_clip:
            c_new = c_new.clamp(-self.cell_clip, self.cell_clip)
        h_new = (torch.sigmoid(o) * torch.tanh(c_new)) @ self.w_p
        if self.proj_clip:
            h_new = h_new.clamp(-self.proj_clip, self.proj_clip)
        return h_new, c_new

    def _inference_step(self, xw_t, h_prev, c_prev, full_rows, bias):
        """The same step without autograd: the recurrent product through ``StepProduct`` and the
        gate nonlinearities in place on the fresh gate tensor."""
        gates = self._recurrent_product(h_prev, self.w_h, full_rows, bias).add_(xw_t)
        i, j, f, o = gates.chunk(4, dim=1)
        torch.sigmoid_(i), torch.tanh_(j), torch.sigmoid_(f), torch.sigmoid_(o)
        c_new = torch.addcmul(f.mul_(c_prev), i, j)
        if self.cell_clip:
            c_new.clamp_(-self.cell_clip, self.cell_clip)
        h_new = torch.tanh(c_new).mul_(o) @ self.w_p
        if self.proj_clip:
            h_new.clamp_(-self.proj_clip, self.proj_clip)
        return h_new, c_new


# steps whose output depends on the data's values (they read it on the host), which a device without
# data cannot run: the word types of a batch (``torch.unique``) and the token cache keyed by them; the
# char CNN's grouping of tokens by length (``CharCNN.padding_shortcut``, tested equal without it); and
# the packing of sentences by length (``run_direction``, which gives ``run_packed`` its step sizes)
DATA_DEPENDENT = ("BiLM.token_representations", "CharCNN.padding_shortcut", "BiLM.run_direction")


def dropout_mask(shape, p: float, dtype: torch.dtype, device, generator=None) -> torch.Tensor:
    """Inverted-dropout multipliers for pretraining (§3.1): 1 / (1 - p) with probability 1 - p, else 0.
    ``nn.functional.dropout``'s distribution, drawn from ``torch.rand`` (on a CPU 1.7x as fast
    as its ``bernoulli_``). The plain and the fast training step draw their masks with this, from the
    same generator in the same order, so the two see the same masks from the same seed."""
    return torch.rand(shape, dtype=dtype, device=device, generator=generator).ge_(p).div_(1 - p)


def apply_dropout(x: torch.Tensor, p: float, training: bool, generator=None) -> torch.Tensor:
    return x * dropout_mask(x.shape, p, x.dtype, x.device, generator) if training and p else x


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row of ``x`` (B, T, ...) within its own length; padding stays in place."""
    steps = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
    lengths = lengths.to(x.device).unsqueeze(1)
    index = torch.where(steps < lengths, lengths - 1 - steps, steps)
    index = index.view(*index.shape, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


@dataclass
class BiLMOutput:
    layers: torch.Tensor  # (L+1, B, T, 2*projection_dim), sentence boundaries removed
    mask: torch.Tensor  # (B, T) bool


State = list[tuple[torch.Tensor, torch.Tensor]]  # per (direction, layer): h (B, P), c (B, D)


class BiLM(nn.Module):
    """Character-based biLM. ``stateful=True`` carries LSTM states across calls per batch row."""

    def __init__(self, opts: BiLMOptions, stateful: bool = False, token_cache_size: int = 100_000):
        super().__init__()
        self.opts = opts
        self.token_encoder = CharCNN(opts)
        P, D = opts.projection_dim, opts.dim
        self.forward_layers = nn.ModuleList(
            ProjectedLSTM(P, D, P, opts.cell_clip, opts.proj_clip) for _ in range(opts.n_layers)
        )
        self.backward_layers = nn.ModuleList(
            ProjectedLSTM(P, D, P, opts.cell_clip, opts.proj_clip) for _ in range(opts.n_layers)
        )
        bos, eos = boundary_ids(opts.max_characters_per_token)
        self.register_buffer("bos_ids", bos, persistent=False)
        self.register_buffer("eos_ids", eos, persistent=False)
        self.stateful = stateful
        self._state: State | None = None
        self.token_cache_size = token_cache_size
        self._token_cache: dict[bytes, int] = {}  # character ids -> row of _token_table
        self._token_table = torch.empty(0)
        self.token_cache_hits = self.token_cache_misses = 0

    # ---------------------------------------------------------------- token layer
    def clear_token_cache(self) -> None:
        self._token_cache.clear()
        self._token_table = torch.empty(0)

    def train(self, mode: bool = True):
        if mode:  # weights may change: cached token representations would go stale
            self.clear_token_cache()
        return super().train(mode)

    def token_representations(self, char_ids: torch.Tensor) -> torch.Tensor:
        """``(N, max_chars)`` -> ``(N, P)``; cached per word type in eval mode."""
        types, inverse = torch.unique(char_ids, dim=0, return_inverse=True)
        if (
            self.training
            or self.token_cache_size <= 0
            or torch.is_grad_enabled()
            and any(p.requires_grad for p in self.token_encoder.parameters())
        ):
            # each word type once per batch; index_select's backward adds repeated rows in a fixed order
            return self.token_encoder(types).index_select(0, inverse)
        keys = [row.tobytes() for row in types.cpu().numpy().astype(np.int16)]
        missing = [i for i, k in enumerate(keys) if k not in self._token_cache]
        self.token_cache_misses += len(missing)
        self.token_cache_hits += len(keys) - len(missing)
        if missing:
            if len(self._token_cache) + len(missing) > self.token_cache_size:
                self._token_cache.clear()
            computed = self.token_encoder(types[missing])
            start, needed = len(self._token_cache), len(self._token_cache) + len(missing)
            if self._token_table.shape[0] < needed or self._token_table.device != computed.device:
                table = computed.new_empty(max(needed, 2 * self._token_table.shape[0], 1024), computed.shape[1])
                if start:
                    table[:start] = self._token_table[:start].to(table.device)
                self._token_table = table
            self._token_table[start:needed] = computed
            for offset, i in enumerate(missing):
                self._token_cache[keys[i]] = start + offset
        rows = torch.tensor([self._token_cache[k] for k in keys], device=char_ids.device)
        return self._token_table.index_select(0, rows[inverse])

    def add_boundaries(self, char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Wrap every sentence in ``<S>``...``</S>``; returns ids (B, T+2, C) and lengths (B,)."""
        B, T, C = char_ids.shape
        lengths = (char_ids > 0).any(dim=-1).sum(dim=1)
        out = char_ids.new_zeros(B, T + 2, C)
        out[:, 1 : T + 1] = char_ids
        out[:, 0] = self.bos_ids
        out[torch.arange(B, device=char_ids.device), lengths + 1] = self.eos_ids
        return out, lengths + 2

    def embed_tokens(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Token layer (B, T, P) for left-aligned sentences of the given lengths; zeros on padding."""
        B, T, C = char_ids.shape
        mask = torch.arange(T, device=char_ids.device).unsqueeze(0) < lengths.to(char_ids.device).unsqueeze(1)
        out = torch.zeros(
            B, T, self.opts.projection_dim, device=char_ids.device, dtype=self.token_encoder.char_embed.weight.dtype
        )
        out[mask] = self.token_representations(char_ids[mask])
        return out

    # ---------------------------------------------------------------- LSTM layers
    def zero_state(self, batch_size: int, device=None) -> State:
        device = device or self.bos_ids.device
        P, D, L = self.opts.projection_dim, self.opts.dim, self.opts.n_layers
        return [
            (torch.zeros(batch_size, P, device=device), torch.zeros(batch_size, D, device=device)) for _ in range(2 * L)
        ]

    def run_direction(
        self,
        direction: int,
        tokens: torch.Tensor,
        lengths: torch.Tensor,
        state: State,
        dropout: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> tuple[list[torch.Tensor], State]:
        """The L layers of one direction over ``tokens`` (B, T, P), read left to right.

        ``state`` holds one (h, c) per layer. Returns each layer's outputs (B, T, P; zero on
        padding) and the final state of every row. ``dropout`` applies to every layer's input
        (training; its masks drawn from ``generator``, default the global one); the residual
        connection adds that (dropped-out) input to the layer output.
        """
        T = tokens.shape[1]
        packed = pack_padded_sequence(tokens, lengths.cpu(), batch_first=True, enforce_sorted=False)
        order, unsort = packed.sorted_indices, packed.unsorted_indices
        if order is not None:
            state = [(h.index_select(0, order.to(h.device)), c.index_select(0, order.to(c.device))) for h, c in state]
        outputs, final = self.run_packed(
            direction, packed.data, packed.batch_sizes.tolist(), state, dropout=dropout, generator=generator
        )
        if unsort is not None:
            final = [(h.index_select(0, unsort.to(h.device)), c.index_select(0, unsort.to(c.device))) for h, c in final]
        outputs = [
            pad_packed_sequence(packed._replace(data=out), batch_first=True, total_length=T)[0] for out in outputs
        ]
        return outputs, final

    def run_packed(
        self,
        direction: int,
        data: torch.Tensor,
        batch_sizes: list[int],
        state: State,
        resets: dict[int, torch.Tensor] | None = None,
        dropout: float = 0.0,
        distinct: tuple[torch.Tensor, torch.Tensor] | None = None,
        generator: torch.Generator | None = None,
    ):
        """The L layers of one direction over packed data (``ProjectedLSTM.forward``'s layout;
        ``state`` in the packed row order). Returns each layer's packed outputs and final states.
        ``distinct=(values, index)``: ``data == values[index]`` (see ``ProjectedLSTM.forward``)."""
        layers = self.forward_layers if direction == 0 else self.backward_layers
        outputs, final = [], []
        for k, layer in enumerate(layers):
            h0, c0 = state[k]
            inp = apply_dropout(data, dropout, self.training, generator)
            out, h, c = layer(inp, batch_sizes, h0, c0, resets, distinct if k == 0 and not dropout else None)
            if k > 0 and self.opts.use_skip_connections:
                out = out + inp
            final.append((h, c))
            outputs.append(out)
            data = out
        return outputs, final

    def run_lstms(
        self, tokens: torch.Tensor, lengths: torch.Tensor, state: State | None = None
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], State]:
        """Both directions over the same sentences (B, T, P): the backward LSTMs read each sentence
        from its end. Returns per-layer forward and backward outputs aligned with the input
        positions and the final state ``[fwd layer 0, ..., fwd layer L-1, bwd layer 0, ...]``."""
        L = self.opts.n_layers
        if state is None:
            state = self.zero_state(tokens.shape[0], tokens.device)
        forward = lambda: self.run_direction(0, tokens, lengths, state[:L])  # noqa: E731
        backward = lambda: self.run_direction(1, reverse_padded(tokens, lengths), lengths, state[L:])  # noqa: E731
        if tokens.device.type == "cpu" and not torch.is_grad_enabled() and torch.get_num_threads() >= 2:
            (fwd, fwd_state), (bwd, bwd_state) = run_side_by_side(forward, backward)
        else:
            (fwd, fwd_state), (bwd, bwd_state) = forward(), backward()
        return fwd, [reverse_padded(b, lengths) for b in bwd], fwd_state + bwd_state

    # ---------------------------------------------------------------- state policy
    def reset_state(self) -> None:
        self._state = None

    def _initial_state(self, batch_size: int, device) -> State:
        if not self.stateful or self._state is None:
            return self.zero_state(batch_size, device)
        stored_rows = self._state[0][0].shape[0]
        if stored_rows < batch_size:  # new rows start from zero
            extra = self.zero_state(batch_size - stored_rows, device)
            self._state = [(torch.cat([h, eh]), torch.cat([c, ec])) for (h, c), (eh, ec) in zip(self._state, extra)]
        return [(h[:batch_size], c[:batch_size]) for h, c in self._state]

    def _store_state(self, final: State) -> None:
        n = final[0][0].shape[0]
        self._state = (
            [
                (torch.cat([h.detach(), old_h[n:]]), torch.cat([c.detach(), old_c[n:]]))
                for (h, c), (old_h, old_c) in zip(final, self._state)
            ]
            if self._state
            else [(h.detach(), c.detach()) for h, c in final]
        )

    # ---------------------------------------------------------------- forward
    def forward(self, char_ids: torch.Tensor) -> BiLMOutput:
        """``(B, T, max_chars)`` ids (``batch_to_ids``) -> L+1 layers, boundaries removed."""
        if char_ids.dim() != 3 or char_ids.shape[-1] != self.opts.max_characters_per_token:
            raise ValueError(
                f"expected character ids of shape (batch, tokens, "
                f"{self.opts.max_characters_per_token}), got {tuple(char_ids.shape)}"
            )
        B, T, _ = char_ids.shape
        with_bounds, lengths = self.add_boundaries(char_ids)
        tokens = self.embed_tokens(with_bounds, lengths)
        fwd, bwd, final = self.run_lstms(tokens, lengths, self._initial_state(B, tokens.device))
        if self.stateful:
            self._store_state(final)
        return self.join_layers(tokens, fwd, bwd, lengths)

    def join_layers(
        self, tokens: torch.Tensor, fwd: list[torch.Tensor], bwd: list[torch.Tensor], lengths: torch.Tensor
    ) -> BiLMOutput:
        """Token layer and [forward; backward] per layer (all (B, T+2, P), with boundaries) ->
        the L+1 output layers with ``<S>``/``</S>`` removed and padding zeroed."""
        T = tokens.shape[1] - 2
        layers = [torch.cat([tokens, tokens], dim=-1)] + [torch.cat(fb, dim=-1) for fb in zip(fwd, bwd)]
        mask = torch.arange(T, device=tokens.device).unsqueeze(0) < (lengths - 2).to(tokens.device).unsqueeze(1)
        stacked = torch.stack(layers)[:, :, 1 : T + 1] * mask.unsqueeze(-1)
        return BiLMOutput(layers=stacked, mask=mask)
