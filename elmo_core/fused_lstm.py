"""The projected, clipped LSTM of Peters et al. (2018), §3.1, for training: one autograd function
for a whole layer's step loop, with the backward pass through time written out.

Same mathematics as ``ProjectedLSTM``'s step (TensorFlow ``LSTMCell`` with projection; gates
i, j, f, o; forget bias already in ``xw``)::

    gates = xw_t + h_{t-1} w_h;  c_t = clip(σ(f) c_{t-1} + σ(i) tanh(j));  h_t = clip((σ(o) tanh(c_t)) w_p)

Why: under autograd every step records a dozen small operations and its own weight-gradient
products (128 x 128 by 128 x 2048 for the small biLM). Here the forward loop runs without
autograd, keeping the gate activations; the backward loop computes only what must be
sequential (the gradient of the gates, then of the previous state), and the weight gradients
come at the end from two large products over all steps at once: dW_h = Σ_t h_{t-1}ᵀ dgates_t
and dW_p = Σ_t m_tᵀ dh_t. The input-to-gate product ``xw`` stays outside (one large product
under ordinary autograd), so the function returns d xw.

Layout is PyTorch's packed sequence: step t uses rows ``[offset_t, offset_t + batch_sizes[t])``
of ``xw``, with non-increasing ``batch_sizes``; ``h0``/``c0`` hold every row. The final states
are returned without gradient (training detaches them between batches).
"""
from __future__ import annotations

import torch


def _clip_(x: torch.Tensor, clip: float | None) -> torch.Tensor | None:
    """Clamp in place; returns where the gradient passes (as torch.clamp's: inside or on the bound)."""
    if not clip:
        return None
    inside = (x >= -clip) & (x <= clip)
    x.clamp_(-clip, clip)
    return inside


class ProjectedLSTMFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xw, w_h, w_p, h0, c0, batch_sizes, cell_clip, proj_clip):
        N, D = xw.shape[0], w_p.shape[0]
        P = w_p.shape[1]
        acts = torch.empty_like(xw)  # σ(i), tanh(j), σ(f), σ(o) of every step
        cells = xw.new_empty(N, D)  # clipped c_t
        mids = xw.new_empty(N, D)  # m_t = σ(o) tanh(c_t)
        outputs = xw.new_empty(N, P)
        cell_pass = torch.empty(N, D, dtype=torch.bool, device=xw.device) if cell_clip else None
        proj_pass = torch.empty(N, P, dtype=torch.bool, device=xw.device) if proj_clip else None
        h, c = h0.detach().clone(), c0.detach().clone()
        offset = 0
        for bs in batch_sizes:
            rows = slice(offset, offset + bs)
            gates = torch.addmm(xw[rows], h[:bs], w_h, out=acts[rows])
            i, j, f, o = gates.chunk(4, dim=1)
            torch.sigmoid_(i), torch.tanh_(j), torch.sigmoid_(f), torch.sigmoid_(o)
            c_new = torch.addcmul(f * c[:bs], i, j, out=cells[rows])
            inside = _clip_(c_new, cell_clip)
            if inside is not None:
                cell_pass[rows] = inside
            m = torch.mul(torch.tanh(c_new), o, out=mids[rows])
            h_new = torch.mm(m, w_p, out=outputs[rows])
            inside = _clip_(h_new, proj_clip)
            if inside is not None:
                proj_pass[rows] = inside
            h[:bs], c[:bs] = h_new, c_new
            offset += bs
        ctx.batch_sizes = batch_sizes
        ctx.save_for_backward(w_h, w_p, h0, c0, acts, cells, mids, outputs, cell_pass, proj_pass)
        ctx.mark_non_differentiable(h, c)
        return outputs, h, c

    @staticmethod
    def backward(ctx, d_outputs, _dh_final, _dc_final):
        w_h, w_p, h0, c0, acts, cells, mids, outputs, cell_pass, proj_pass = ctx.saved_tensors
        batch_sizes = ctx.batch_sizes
        N, D = cells.shape
        B = h0.shape[0]
        d_gates = torch.empty_like(acts)
        d_proj = torch.empty_like(outputs)  # gradient of h_t before its clip (= of m_t w_p)
        dh_next, dc_next = h0.new_zeros(B, h0.shape[1]), c0.new_zeros(B, D)
        w_h_t, w_p_t = w_h.t(), w_p.t()
        starts = [0]
        for bs in batch_sizes[:-1]:
            starts.append(starts[-1] + bs)
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs, start = batch_sizes[t], starts[t]
            rows = slice(start, start + bs)
            dh = torch.add(d_outputs[rows], dh_next[:bs], out=d_proj[rows])
            if proj_pass is not None:
                dh.mul_(proj_pass[rows])
            i, j, f, o = acts[rows].chunk(4, dim=1)
            c = cells[rows]
            c_prev = c0[:bs] if t == 0 else cells[starts[t - 1]: starts[t - 1] + bs]
            dm = dh @ w_p_t
            tanh_c = torch.tanh(c)
            di, dj, df, do = d_gates[rows].chunk(4, dim=1)
            torch.mul(dm, tanh_c, out=do).mul_(o * (1 - o))
            dc = dm.mul_(o).mul_(1 - tanh_c * tanh_c).add_(dc_next[:bs])
            if cell_pass is not None:
                dc.mul_(cell_pass[rows])
            torch.mul(dc, c_prev, out=df).mul_(f * (1 - f))
            torch.mul(dc, j, out=di).mul_(i * (1 - i))
            torch.mul(dc, i, out=dj).mul_(1 - j * j)
            dc_next[:bs] = dc.mul_(f)
            dh_next[:bs] = d_gates[rows] @ w_h_t
        # h_{t-1} of every step's rows, in the packed layout: h0 for step 0, then the outputs
        h_prev = torch.cat([h0[:batch_sizes[0]]] + [outputs[starts[t - 1]: starts[t - 1] + batch_sizes[t]]
                                                   for t in range(1, len(batch_sizes))])
        d_w_h = h_prev.t() @ d_gates
        d_w_p = mids.t() @ d_proj
        return d_gates, d_w_h, d_w_p, dh_next, dc_next, None, None, None


def projected_lstm(xw: torch.Tensor, w_h: torch.Tensor, w_p: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                   batch_sizes: list[int], cell_clip: float | None, proj_clip: float | None):
    """Packed outputs (N, P) and the final (h, c) of every row; see the module docstring."""
    return ProjectedLSTMFunction.apply(xw, w_h, w_p, h0, c0, list(batch_sizes), cell_clip, proj_clip)
