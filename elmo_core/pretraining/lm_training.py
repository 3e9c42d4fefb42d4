"""The biLM training objective (Peters et al. 2018, §3.1, eq. of the joint log-likelihood):

    Σ_k  log p(t_k | t_1..t_{k-1}; Θx, Θ→LSTM, Θs) + log p(t_k | t_{k+1}..t_N; Θx, Θ←LSTM, Θs)

The token representation Θx (the character CNN) and the softmax Θs are shared by the two
directions; each direction has its own LSTMs. The loss is the mean of the two directions'
per-token cross-entropies, as in the original code.

Softmax: an adaptive softmax (Grave et al. 2017; ``torch.nn.AdaptiveLogSoftmaxWithLoss``) over a
frequency-sorted vocabulary. Unlike the original's sampled softmax it is a proper normalized
distribution over the whole vocabulary both in training and at evaluation, so the training loss
and the held-out perplexity measure the same thing, and it is several times cheaper than a full
softmax on CPU. Perplexity is computed with that full (normalized) distribution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from suite_common.progress import progress_bar

from ..bilm import BiLM, State, apply_dropout
from .lm_data import LMBatch, LMStream, SentenceStream, expand_files, heldout_sources, why_no_sources


def default_cutoffs(vocab_size: int) -> list[int]:
    cutoffs = [c for c in (4000, 20000, 100000) if c < vocab_size - 1]
    return cutoffs or [max(1, vocab_size // 2)]


class LanguageModel(nn.Module):
    def __init__(
        self,
        bilm: BiLM,
        vocab_size: int,
        cutoffs: list[int] | None = None,
        dropout: float = 0.1,
        div_value: float = 4.0,
    ):
        super().__init__()
        self.bilm = bilm
        self.dropout = dropout
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(
            bilm.opts.projection_dim, vocab_size, cutoffs or default_cutoffs(vocab_size), div_value=div_value
        )

    def direction_log_probs(
        self,
        direction: int,
        chars: torch.Tensor,
        targets: torch.Tensor,
        lengths: torch.Tensor,
        state: State,
        fold: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, State]:
        """Target log-probabilities (N valid tokens,) of one direction's stream, and its final state.
        ``fold`` (a mask over the vocabulary): the words another, smaller vocabulary does not hold, with
        ``<UNK>``; a target among them gets their summed probability, as that vocabulary's ``<UNK>``.
        ``generator``: the one the dropout masks are drawn from in training (``direction_generators``)."""
        T = chars.shape[1]
        tokens = self.bilm.embed_tokens(chars, lengths)
        outputs, final = self.bilm.run_direction(direction, tokens, lengths, state, self.dropout, generator)
        top = apply_dropout(outputs[-1], self.dropout, self.training, generator)
        valid = torch.arange(T, device=chars.device).unsqueeze(0) < lengths.to(chars.device).unsqueeze(1)
        valid = valid & (targets >= 0)
        log_probs = self.softmax(top[valid], targets[valid]).output
        if fold is not None:
            folded = fold[targets[valid]]
            if folded.any():
                full = self.softmax.log_prob(top[valid][folded])
                log_probs = log_probs.clone()
                log_probs[folded] = torch.logsumexp(full[:, fold], dim=1)
        return log_probs, final

    def forward(
        self, batch: LMBatch, state: State, rows: slice = slice(None), device: str | torch.device = "cpu"
    ) -> tuple[torch.Tensor, State]:
        """Summed negative log-likelihood of each direction over this worker's rows, shape (2,),
        and the new state. ``rows`` selects this worker's rows of the global batch."""
        L = self.bilm.opts.n_layers
        lengths = torch.from_numpy(batch.lengths[rows]).to(device)
        generators = direction_generators(device)
        nll, final = [], []
        for d, (chars, targets) in enumerate(
            ((batch.forward_chars, batch.forward_targets), (batch.backward_chars, batch.backward_targets))
        ):
            lp, st = self.direction_log_probs(
                d,
                torch.from_numpy(chars[rows]).to(device),
                torch.from_numpy(targets[rows]).to(device),
                lengths,
                state[d * L : (d + 1) * L],
                generator=generators[d],
            )
            nll.append(-lp.sum())
            final += st
        return torch.stack(nll), final


def direction_generators(device) -> list[torch.Generator]:
    """One random generator per direction for a training update's dropout masks, each seeded from
    the global CPU generator: a run resumed from a checkpoint (which keeps that generator's state)
    draws the masks an uninterrupted one draws, on a GPU as well, and the fast step draws each
    direction's masks on that direction's own thread."""
    seeds = torch.randint(0, 2**62, (2,)).tolist()
    return [torch.Generator(device=device).manual_seed(seed) for seed in seeds]


def lm_optimizer(lm: nn.Module, lr: float, device) -> torch.optim.Adagrad:
    """The original's Adagrad (initial accumulator 1.0), in torch's fused implementation where it has one
    (CPU and CUDA: one kernel per parameter, 3x faster than the default on a 2-core CPU)."""
    fused = torch.device(device).type in ("cpu", "cuda")
    return torch.optim.Adagrad(lm.parameters(), lr=lr, initial_accumulator_value=1.0, fused=fused)


def detach_state(state: State) -> State:
    return [(h.detach(), c.detach()) for h, c in state]


@dataclass
class Perplexity:
    forward: float
    backward: float
    tokens: int

    @property
    def average(self) -> float:
        """The paper's Table 7 figure: arithmetic mean of the two directions' perplexities."""
        return (self.forward + self.backward) / 2

    @property
    def geometric(self) -> float:
        """exp(mean of the two cross-entropies), what the original ``run_test`` prints."""
        return math.sqrt(self.forward * self.backward)

    def as_dict(self) -> dict:
        return {
            "forward": round(self.forward, 3),
            "backward": round(self.backward, 3),
            "average": round(self.average, 3),
            "geometric": round(self.geometric, 3),
            "tokens": self.tokens,
        }


@torch.no_grad()
def evaluate_perplexity(
    model: LanguageModel,
    stream: LMStream,
    stateful: bool = True,
    device: str | torch.device = "cpu",
    progress: bool = False,
    warmup_batches: int = 0,
    desc: str = "perplexity",
    fold: torch.Tensor | None = None,
) -> Perplexity:
    """Held-out perplexity of both directions over every token of ``stream`` (one epoch, in order).

    ``stateful``: states carried across batches per row, as the biLM was trained;
    otherwise every batch starts from a zero state. ``warmup_batches`` (stateful only): first run
    that many batches of the stream unscored, then score every batch from the start with the
    warmed-up states. ``fold``: score in a smaller vocabulary's event space (``direction_log_probs``).
    """
    was_training = model.training
    model.eval()
    nll, count = np.zeros(2), 0
    state = model.bilm.zero_state(stream.batch_size, device)
    if stateful and warmup_batches:
        for k, batch in enumerate(stream.batches(0)):
            if k == warmup_batches:
                break
            lengths = torch.from_numpy(batch.lengths).to(device)
            L = model.bilm.opts.n_layers
            state = sum(
                (
                    model.direction_log_probs(
                        d,
                        torch.from_numpy(c).to(device),
                        torch.from_numpy(t).to(device),
                        lengths,
                        state[d * L : (d + 1) * L],
                    )[1]
                    for d, (c, t) in enumerate(
                        ((batch.forward_chars, batch.forward_targets), (batch.backward_chars, batch.backward_targets))
                    )
                ),
                [],
            )
    for batch in progress_bar(stream.batches(0), desc=desc, unit="batch", disable=not progress):
        if not stateful:
            state = model.bilm.zero_state(stream.batch_size, device)
        lengths = torch.from_numpy(batch.lengths).to(device)
        L, new_state = model.bilm.opts.n_layers, []
        for d, (chars, targets) in enumerate(
            ((batch.forward_chars, batch.forward_targets), (batch.backward_chars, batch.backward_targets))
        ):
            lp, st = model.direction_log_probs(
                d,
                torch.from_numpy(chars).to(device),
                torch.from_numpy(targets).to(device),
                lengths,
                state[d * L : (d + 1) * L],
                fold,
            )
            nll[d] -= float(lp.double().sum())
            new_state += st
        count += int((batch.forward_targets >= 0).sum())
        state = new_state
    model.train(was_training)
    if count == 0:
        raise ValueError("no tokens to evaluate")
    return Perplexity(math.exp(nll[0] / count), math.exp(nll[1] / count), count)


def fold_mask(vocab, smaller) -> torch.Tensor:
    """Over ``vocab``'s ids: True for the words ``smaller`` (another vocabulary) does not hold, and for
    ``<UNK>``: scored together as ``smaller``'s ``<UNK>``, they give perplexities in its event space,
    comparable with those of a biLM trained on it. ``smaller`` must be a subset of ``vocab``."""
    missing = [w for w in smaller.words if w not in vocab.index]
    if missing:
        raise ValueError(
            f"the vocabulary to fold into has {len(missing)} words this model's lacks (e.g. {missing[0]!r})"
        )
    mask = torch.ones(len(vocab), dtype=torch.bool)
    mask[[vocab.index[w] for w in smaller.words if w != smaller.words[smaller.unk]]] = False
    return mask


def heldout_report(
    model: LanguageModel,
    vocab,
    heldout: str | list[str],
    batch_size: int,
    unroll_steps: int,
    device: str | torch.device = "cpu",
    stateless: bool = True,
    progress: bool = False,
    fold: torch.Tensor | None = None,
) -> dict:
    """Held-out perplexity of the whole text, stateful (as trained) and, if asked, stateless;
    and per source (stateful, and stateless if asked) when the file's ``stats.json`` says which
    lines are which source (``lm_data.heldout_sources``). Each source is read as a stream of its own."""
    files = expand_files(heldout)
    stream = LMStream(files, vocab, batch_size, unroll_steps, shuffle=False)
    score = lambda stream, stateful, desc: evaluate_perplexity(  # noqa: E731
        model, stream, stateful, device, progress, desc=desc, fold=fold
    ).as_dict()
    report = {"stateful": score(stream, True, "stateful")}
    if stateless:
        report["stateless"] = score(stream, False, "stateless")
    sources = heldout_sources(files[0]) if len(files) == 1 else None
    if not sources:
        report["by_source_missing"] = why_no_sources(files) or "the stats.json lists no source"
        return report
    for stateful in (True, False) if stateless else (True,):
        kind = "stateful" if stateful else "stateless"
        report[f"by_source_{kind}"] = {
            name: score(SentenceStream(sentences, vocab, batch_size, unroll_steps), stateful, f"source {name} ({kind})")
            for name, sentences in sources.items()
        }
    return report
