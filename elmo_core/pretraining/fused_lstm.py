"""The projected, clipped LSTM of Peters et al. (2018), §3.1, for training: one autograd function
for a whole layer (input product and step loop), with the backward pass through time written out.

Same mathematics as ``ProjectedLSTM``'s step (TensorFlow ``LSTMCell`` with projection; gates
i, j, f, o; the forget bias already in ``bias``)::

    gates = x_t w_x + b + h_{t-1} w_h;  c_t = clip(σ(f) c_{t-1} + σ(i) tanh(j));  h_t = clip((σ(o) tanh(c_t)) w_p)

Why: under autograd every step records a dozen small operations and its own weight-gradient
products (128 x 128 by 128 x 2048 for the small biLM). Here the forward loop runs without
autograd, keeping the gate activations; the backward loop computes only what must be
sequential (the gradient of the gates, then of the previous state), and the weight gradients
come at the end from large products over all steps at once: [dW_x; db; dW_h] = Σ_t [x_t 1 h_{t-1}]ᵀ
dgates_t (one product) and dW_p = Σ_t m_tᵀ dh_t.

Less memory traffic per step: the gate columns are taken in the order i, f, o, j (a permuted
copy of the small weights per call), so the three sigmoids are one operation on a block and
the tanh another; the recurrent product adds into the input product's buffer in place; the
previous h and c are read where the previous step wrote them; tanh(c_t) is kept for the
backward pass; the gates' gradients overwrite their activations, which are then no longer
needed. Gradients are returned in the parameters' own column order. Each step's views of the kept
buffers are made once and kept with them: the loops then call little but the arithmetic, which
matters when the two directions' loops run side by side and share Python's interpreter lock.

Layout is PyTorch's packed sequence: step t uses rows ``[offset_t, offset_t + batch_sizes[t])``
of the input, with non-increasing ``batch_sizes``; ``h0``/``c0`` hold every row. The final
states are returned without gradient (training detaches them between batches).
"""

from __future__ import annotations

import torch


def _gate_order(n_cells: int, device) -> torch.Tensor:
    """Columns of i, f, o, j in the parameters' i, j, f, o layout."""
    i, j, f, o = torch.arange(4 * n_cells, device=device).view(4, n_cells)
    return torch.cat([i, f, o, j])


def _clip_(x: torch.Tensor, clip: float | None, passes: torch.Tensor | None) -> None:
    """Clamp in place, first writing into ``passes`` 1.0 where the gradient passes (as torch.clamp's:
    inside or on the bound), else 0.0. (A float mask: comparing into, and multiplying by, a bool
    tensor each ran 4-5x slower.)"""
    if clip:
        torch.abs(x, out=passes).le_(clip)
        x.clamp_(-clip, clip)


def kept_buffer(workspace: dict | None, name, shape, like: torch.Tensor, dtype=None) -> torch.Tensor:
    """An uninitialised tensor; with a ``workspace``, the one kept there from the last call when
    it fits (no fresh pages to fault in on every update)."""
    dtype = dtype or like.dtype
    if workspace is None:
        return torch.empty(shape, dtype=dtype, device=like.device)
    kept = workspace.get(name)
    if kept is None or kept.shape != torch.Size(shape) or kept.dtype != dtype or kept.device != like.device:
        kept = workspace[name] = None  # free the old one first
        kept = workspace[name] = torch.empty(shape, dtype=dtype, device=like.device)
    return kept


def _starts(batch_sizes: list[int]) -> list[int]:
    starts = [0]
    for bs in batch_sizes[:-1]:
        starts.append(starts[-1] + bs)
    return starts


def kept_views(workspace: dict | None, name, buffers: tuple, layout: tuple, make) -> list:
    """``make()``: each step's views of ``buffers``, made once per layout and kept in the ``workspace`` while
    the buffers are the same tensors. Slicing holds Python's interpreter lock, which the two directions'
    threads share: kept, about ten slices per step leave the loops."""
    if workspace is None:
        return make()
    kept = workspace.get(name)
    if kept is None or kept[1] != layout or any(a is not b for a, b in zip(kept[0], buffers)):
        kept = workspace[name] = (buffers, layout, make())
    return kept[2]


def _forward_views(buffers, batch_sizes, starts, n_in) -> list[tuple]:
    """Per step: its gates, their sigmoid and tanh blocks, the four gates, c_t, its clip mask, tanh(c_t), m_t,
    h_t's clip mask, and where the next step's rows of h_{t-1} go (None after the last step)."""
    acts, cells, tanh_cells, mids, cell_pass, proj_pass, both = buffers
    D, steps = cells.shape[1], []
    for t, bs in enumerate(batch_sizes):
        rows = slice(starts[t], starts[t] + bs)
        gates = acts[rows]
        nxt = batch_sizes[t + 1] if t + 1 < len(batch_sizes) else 0
        next_h = both[starts[t + 1] : starts[t + 1] + nxt, n_in + 1 :] if nxt else None
        steps.append(
            (
                gates,
                gates[:, : 3 * D],
                gates[:, 3 * D :],
                gates.chunk(4, dim=1),
                cells[rows],
                None if cell_pass is None else cell_pass[rows],
                tanh_cells[rows],
                mids[rows],
                None if proj_pass is None else proj_pass[rows],
                next_h,
            )
        )
    return steps


def _backward_views(buffers, batch_sizes, starts) -> list[tuple]:
    """Per step: the gradient of h_t before its clip, h_t's clip mask, the gates, their sigmoid block, the four
    gates, tanh(c_t), c_{t-1} (None at the first step: the initial state is not a kept buffer), c_t's clip mask."""
    acts, cells, tanh_cells, cell_pass, proj_pass, d_proj = buffers
    D, steps = cells.shape[1], []
    for t, bs in enumerate(batch_sizes):
        rows = slice(starts[t], starts[t] + bs)
        gates = acts[rows]
        c_prev = cells[starts[t - 1] : starts[t - 1] + bs] if t else None
        steps.append(
            (
                d_proj[rows],
                None if proj_pass is None else proj_pass[rows],
                gates,
                gates[:, : 3 * D],
                gates.chunk(4, dim=1),
                tanh_cells[rows],
                c_prev,
                None if cell_pass is None else cell_pass[rows],
            )
        )
    return steps


class ProjectedLSTMFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, w_x, bias, w_h, w_p, h0, c0, batch_sizes, cell_clip, proj_clip, workspace):
        N, D, P = inputs.shape[0], w_p.shape[0], w_p.shape[1]
        n_in = inputs.shape[1]
        order = _gate_order(D, inputs.device)
        w_h_ifoj = w_h.index_select(1, order)
        # each row's input, a 1 (for the bias) and h_{t-1}: the input product's left side now, and the
        # weight gradients' in the backward pass ([dW_x; db; dW_h] in one product)
        both = kept_buffer(workspace, "both", (N, n_in + 1 + P), inputs)
        both[:, :n_in] = inputs
        both[:, n_in] = 1.0
        both[: batch_sizes[0], n_in + 1 :] = h0[: batch_sizes[0]]
        acts = kept_buffer(workspace, "acts", (N, 4 * D), inputs)  # gates, then σ/tanh, then their gradients
        w_xb = torch.cat([w_x, bias.unsqueeze(0)]).index_select(1, order)
        torch.mm(both[:, : n_in + 1], w_xb, out=acts)
        cells = kept_buffer(workspace, "cells", (N, D), inputs)  # clipped c_t
        tanh_cells = kept_buffer(workspace, "tanh_cells", (N, D), inputs)
        mids = kept_buffer(workspace, "mids", (N, D), inputs)  # m_t = σ(o) tanh(c_t)
        outputs = inputs.new_empty(N, P)
        cell_pass = kept_buffer(workspace, "cell_pass", (N, D), inputs) if cell_clip else None
        proj_pass = kept_buffer(workspace, "proj_pass", (N, P), inputs) if proj_clip else None
        ctx.workspace = workspace
        starts = _starts(batch_sizes)
        buffers = (acts, cells, tanh_cells, mids, cell_pass, proj_pass, both)
        steps = kept_views(
            workspace,
            "forward_steps",
            buffers,
            (tuple(batch_sizes), n_in),
            lambda: _forward_views(buffers, batch_sizes, starts, n_in),
        )
        h_final, c_final = h0.detach().clone(), c0.detach().clone()
        h_prev, c_prev = h0.detach(), c0.detach()
        for bs, h, step in zip(batch_sizes, outputs.split(batch_sizes), steps):
            gates, sig, tanh_j, (i, f, o, j), c, c_pass, tanh_c, m, h_pass, next_h = step
            gates.addmm_(h_prev if h_prev.shape[0] == bs else h_prev[:bs], w_h_ifoj)
            torch.sigmoid_(sig), torch.tanh_(tanh_j)
            torch.mul(f, c_prev if c_prev.shape[0] == bs else c_prev[:bs], out=c).addcmul_(i, j)
            _clip_(c, cell_clip, c_pass)
            torch.mm(torch.mul(torch.tanh(c, out=tanh_c), o, out=m), w_p, out=h)
            _clip_(h, proj_clip, h_pass)
            following = next_h.shape[0] if next_h is not None else 0
            if following:
                next_h.copy_(h if following == bs else h[:following])
            if following < bs:  # rows whose sequence ends at this step
                h_final[following:bs], c_final[following:bs] = h[following:], c[following:]
            h_prev, c_prev = h, c
        ctx.batch_sizes, ctx.starts, ctx.order = batch_sizes, starts, order
        ctx.save_for_backward(inputs, w_x, w_h, w_p, h0, c0)
        ctx.buffers = (acts, cells, tanh_cells, mids, outputs, cell_pass, proj_pass, both)
        ctx.mark_non_differentiable(h_final, c_final)
        return outputs, h_final, c_final

    @staticmethod
    def backward(ctx, d_outputs, _dh_final, _dc_final):
        inputs, w_x, w_h, w_p, h0, c0 = ctx.saved_tensors
        acts, cells, tanh_cells, mids, outputs, cell_pass, proj_pass, both = ctx.buffers
        ctx.buffers = None  # one backward pass: the activations are overwritten below
        batch_sizes, starts, order = ctx.batch_sizes, ctx.starts, ctx.order
        D = cells.shape[1]
        d_gates = acts  # step t's gate gradients overwrite its activations (i, f, o, j order)
        d_proj = kept_buffer(ctx.workspace, "d_proj", outputs.shape, outputs)  # gradient of h_t before its clip
        # the transposed weights stored as such: MKL's products run 1.1-1.4x faster on them than on transposed views
        w_h_ifoj_t, w_p_t = w_h.index_select(1, order).t().contiguous(), w_p.t().contiguous()
        buffers = (acts, cells, tanh_cells, cell_pass, proj_pass, d_proj)
        steps = kept_views(
            ctx.workspace,
            "backward_steps",
            buffers,
            tuple(batch_sizes),
            lambda: _backward_views(buffers, batch_sizes, starts),
        )
        one = tanh_cells.new_ones(())
        dh_next = dc_next = None
        for t, d_out in reversed(list(enumerate(d_outputs.split(batch_sizes)))):
            dh, h_pass, gates, sig, (i, f, o, j), tanh_c, c_prev, c_pass = steps[t]
            bs = gates.shape[0]
            if t == 0:
                c_prev = c0 if c0.shape[0] == bs else c0[:bs]
            if dh_next is None:
                dh.copy_(d_out)
            elif dh_next.shape[0] == bs:
                torch.add(d_out, dh_next, out=dh)
            else:
                n = dh_next.shape[0]
                torch.add(d_out[:n], dh_next, out=dh[:n])
                dh[n:] = d_out[n:]
            if h_pass is not None:
                dh.mul_(h_pass)
            dm = dh @ w_p_t
            d_o = dm * tanh_c
            dc = dm.mul_(o).mul_(torch.addcmul(one, tanh_c, tanh_c, value=-1))
            if dc_next is not None:
                dc.add_(dc_next) if dc_next.shape[0] == bs else dc[: dc_next.shape[0]].add_(dc_next)
            if c_pass is not None:
                dc.mul_(c_pass)
            d_i, d_f, d_j = dc * j, dc * c_prev, dc * i
            dc_next = dc.mul_(f)
            # activations -> derivatives: σ' = s - s², tanh' = 1 - a², then times the gradients
            sig.addcmul_(sig, sig, value=-1)
            j.mul_(j).neg_().add_(1)
            i.mul_(d_i), f.mul_(d_f), o.mul_(d_o), j.mul_(d_j)
            dh_next = gates @ w_h_ifoj_t
        n_in = inputs.shape[1]
        unorder = torch.argsort(order)
        d_inputs = d_gates @ w_x.index_select(1, order).t().contiguous()
        d_w_x, d_bias, d_w_h = (both.t() @ d_gates).index_select(1, unorder).split([n_in, 1, w_h.shape[0]])
        d_bias = d_bias.squeeze(0)
        d_w_p = mids.t() @ d_proj
        B = h0.shape[0]
        d_h0, d_c0 = h0.new_zeros(B, h0.shape[1]), c0.new_zeros(B, D)
        d_h0[: dh_next.shape[0]], d_c0[: dc_next.shape[0]] = dh_next, dc_next
        return d_inputs, d_w_x, d_bias, d_w_h, d_w_p, d_h0, d_c0, None, None, None, None


def projected_lstm(
    inputs: torch.Tensor,
    w_x: torch.Tensor,
    bias: torch.Tensor,
    w_h: torch.Tensor,
    w_p: torch.Tensor,
    h0: torch.Tensor,
    c0: torch.Tensor,
    batch_sizes: list[int],
    cell_clip: float | None,
    proj_clip: float | None,
    workspace: dict | None = None,
):
    """Packed outputs (N, P) and the final (h, c) of every row; ``bias`` includes the forget
    bias. See the module docstring.

    ``workspace``: a dict owned by the caller, one per layer, in which the internal buffers are
    kept from one call to the next. Only for a caller that finishes each call's backward pass
    before the next call with the same dict (a training step), since the next call overwrites
    what the last one saved for its backward pass."""
    return ProjectedLSTMFunction.apply(
        inputs, w_x, bias, w_h, w_p, h0, c0, list(batch_sizes), cell_clip, proj_clip, workspace
    )
