"""The end-to-end coreference model of Lee et al. (2017), the paper's coreference baseline
(Peters et al. 2018, appendix A.6), on one document at a time:

x_k = word embedding + character CNN (+ ELMo at the input, §3.3), lexical dropout -> a BiLSTM over
each sentence (+ ELMo at the output) -> every span of up to ``max_span_width`` words within a
sentence, represented by [h_start; h_end; head-word attention over the span's x_k; width
embedding] -> mention score s_m (feed-forward) -> the top ``span_ratio``·words spans by s_m that
cross no better span -> for each kept span i, its ``max_antecedents`` preceding kept spans j scored
s(i, j) = s_m(i) + s_m(j) + s_a(i, j), s_a a feed-forward network over [g_i; g_j; g_i∘g_j;
distance-bucket embedding], and the dummy antecedent ε with score 0. Loss: the negative marginal
log-likelihood of all gold antecedents of each kept span (ε when it has none). Decoding links
each span to its best antecedent (or none) and takes the connected clusters.

Speaker and genre features of the original are OntoNotes metadata and are not used here. Two settings
make the head behave as allennlp-models' coref does (``results/conformance.md``): ``weight_init=xavier``
(its initializers) and ``context=document`` (the BiLSTM over the document's words as one sequence).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..common.layers import TaskModel, TokenEmbedder, rows_at, run_rnn

# steps whose output depends on the values of the data (read on the host): see tasks.common.layers.DATA_DEPENDENT
DATA_DEPENDENT = ("prune_spans", "CorefModel.gold_cluster_of_spans")
DISTANCE_BUCKETS = (1, 2, 3, 4, 5, 8, 16, 32, 64)  # lower bounds: 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+


def distance_bucket(d: torch.Tensor) -> torch.Tensor:
    return torch.bucketize(d, torch.tensor(DISTANCE_BUCKETS, device=d.device), right=True).clamp(min=1) - 1


def feed_forward(dim_in: int, hidden: int, depth: int, dropout: float) -> nn.Sequential:
    layers, d = [], dim_in
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.ReLU(), nn.Dropout(dropout)]
        d = hidden
    return nn.Sequential(*layers, nn.Linear(d, 1))


def prune_spans(scores: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int) -> torch.Tensor:
    """Indices of up to ``k`` spans, best score first, skipping any span that crosses (partly
    overlaps without nesting) an already kept one; returned in document order (start, end)."""
    order = torch.argsort(scores.detach(), descending=True, stable=True).tolist()
    s_list, e_list = starts.tolist(), ends.tolist()
    n = max(e_list, default=-1) + 1
    max_end_from = np.full(n + 1, -1)  # the furthest end of a kept span starting at each position
    min_start_to = np.full(n + 1, n)  # the earliest start of a kept span ending at each position
    kept = []
    for i in order:
        if len(kept) == k:
            break
        s, e = s_list[i], e_list[i]
        if e > s and (max_end_from[s + 1 : e + 1].max() > e or min_start_to[s:e].min() < s):
            continue
        kept.append(i)
        max_end_from[s] = max(max_end_from[s], e)
        min_start_to[e] = min(min_start_to[e], s)
    kept.sort(key=lambda i: (s_list[i], e_list[i]))
    return torch.tensor(kept, dtype=torch.long, device=scores.device)


class CorefModel(TaskModel):
    gold_keys = ("gold_starts", "gold_ends", "gold_clusters")

    def __init__(self, words: list[str], cfg, features):
        super().__init__()
        m = cfg.model
        self.features = features
        self.max_width, self.ratio, self.max_antecedents = m.max_span_width, m.span_ratio, m.max_antecedents
        self.context = m.context
        self.embedder = TokenEmbedder.from_config(words, m)
        self.lexical_dropout = nn.Dropout(m.lexical_dropout)
        self.dropout = nn.Dropout(m.dropout)
        text_dim = self.embedder.output_dim + features.input_dim
        self.lstm = nn.LSTM(text_dim, m.hidden, batch_first=True, bidirectional=True)
        out_dim = 2 * m.hidden + features.output_dim
        self.head_score = nn.Linear(out_dim, 1)
        self.width_embedding = nn.Embedding(m.max_span_width, m.feature_size)
        span_dim = 2 * out_dim + text_dim + m.feature_size
        self.mention_scorer = feed_forward(span_dim, m.ffnn_size, m.ffnn_depth, m.dropout)
        self.distance_embedding = nn.Embedding(len(DISTANCE_BUCKETS), m.feature_size)
        self.antecedent_scorer = feed_forward(3 * span_dim + m.feature_size, m.ffnn_size, m.ffnn_depth, m.dropout)
        if m.weight_init == "xavier":
            self.xavier_init()

    def xavier_init(self) -> None:
        """allennlp-models' coref start (``coref_elmo.jsonnet``): Xavier-normal feed-forward and scorer weights,
        span-width and distance embeddings and the BiLSTM's input weights; its recurrent weights orthogonal."""
        linears = [x for x in [*self.mention_scorer, *self.antecedent_scorer] if isinstance(x, nn.Linear)]
        for weight in [x.weight for x in linears] + [self.width_embedding.weight, self.distance_embedding.weight]:
            nn.init.xavier_normal_(weight)
        for name, weight in self.lstm.named_parameters():
            if name.startswith("weight_ih"):
                nn.init.xavier_normal_(weight)
            elif name.startswith("weight_hh"):
                nn.init.orthogonal_(weight)

    def contextualize(self, text: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The BiLSTM's outputs (S, T, 2h): over each sentence, or over the document's words as one sequence."""
        if self.context == "sentence":
            return run_rnn(self.lstm, text, mask)
        outputs = text.new_zeros(*mask.shape, 2 * self.lstm.hidden_size)
        outputs[mask] = self.lstm(text[mask].unsqueeze(0))[0][0]
        return outputs

    def candidate_spans(self, sentence_of_word: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every span of up to max_width words inside one sentence: starts, ends (inclusive)."""
        n = sentence_of_word.shape[0]
        starts = torch.arange(n, device=sentence_of_word.device).repeat_interleave(self.max_width)
        ends = starts + torch.arange(self.max_width, device=starts.device).repeat(n)
        inside = ends < n
        starts, ends = starts[inside], ends[inside]
        same = sentence_of_word[starts] == sentence_of_word[ends]
        return starts[same], ends[same]

    def span_embeddings(
        self, text: torch.Tensor, outputs: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor
    ) -> torch.Tensor:
        widths = ends - starts
        offsets = torch.arange(self.max_width, device=starts.device)
        index = (starts.unsqueeze(1) + offsets).clamp(max=text.shape[0] - 1)  # (C, W)
        inside = offsets.unsqueeze(0) <= widths.unsqueeze(1)
        head = rows_at(self.head_score(outputs).squeeze(-1), index).masked_fill(~inside, float("-inf"))
        attended = (torch.softmax(head, dim=1).unsqueeze(-1) * rows_at(text, index)).sum(1)
        width = self.dropout(self.width_embedding(widths))
        return torch.cat([rows_at(outputs, starts), rows_at(outputs, ends), attended, width], dim=-1)

    def scores(self, batch: dict) -> dict:
        """One document: sentences (S, T) -> its kept spans (``starts``, ``ends``: (k,)), each one's
        ``antecedents`` (k, A) and their ``scores`` (k, 1 + A), ε first, with ``valid`` (k, A)
        marking the antecedents that exist."""
        mask = batch["mask"]
        elmo = self.features(batch)
        text = self.lexical_dropout(self.features.add_input(self.embedder(batch["word_ids"], batch["char_ids"]), elmo))
        outputs = self.dropout(self.features.add_output(self.contextualize(text, mask), elmo))
        sentence_of_word = torch.arange(mask.shape[0], device=mask.device).unsqueeze(1).expand_as(mask)[mask]
        text, outputs = text[mask], outputs[mask]  # (N, ·): the document's words, padding removed
        starts, ends = self.candidate_spans(sentence_of_word)
        spans = self.span_embeddings(text, outputs, starts, ends)
        mention_scores = self.mention_scorer(spans).squeeze(-1)
        kept = prune_spans(mention_scores, starts, ends, max(1, int(text.shape[0] * self.ratio)))
        starts, ends, spans, mention_scores = starts[kept], ends[kept], spans[kept], mention_scores[kept]
        k = kept.shape[0]
        back = torch.arange(1, min(self.max_antecedents, max(k - 1, 1)) + 1, device=kept.device)  # (A,)
        antecedents = torch.arange(k, device=kept.device).unsqueeze(1) - back  # (k, A)
        valid = antecedents >= 0
        antecedents = antecedents.clamp(min=0)
        scores = (
            self.pair_scores(spans, antecedents, back)
            + mention_scores.unsqueeze(1)
            + rows_at(mention_scores, antecedents)
        )
        scores = torch.cat([scores.new_zeros(k, 1), scores.masked_fill(~valid, float("-inf"))], dim=1)  # ε first
        return {"starts": starts, "ends": ends, "antecedents": antecedents, "scores": scores, "valid": valid}

    PAIR_FLOATS = 1 << 25  # the most pair-representation floats held at once when not training (128 MB)

    def pair_scores(self, spans: torch.Tensor, antecedents: torch.Tensor, back: torch.Tensor) -> torch.Tensor:
        """s_a(i, j) of every kept span i and its antecedents j (k, A), from [g_i, g_j, g_i∘g_j, φ(i, j)].

        The scorer's first layer is linear, so W·[g_i; g_j; g_i∘g_j; φ] = W_i g_i + W_j g_j + W_∘(g_i∘g_j)
        + W_φ φ: the first, second and last terms are computed once per span (or distance) and only
        g_i∘g_j is built per pair, a third of the full pair vector (the same function; the parameters are
        the one ``nn.Linear``). Training builds all pairs at once (their activations are kept for the
        backward pass anyway); scoring builds them for a block of spans at a time, so a long document never
        holds every pair at once (the same scores)."""
        k, n_back = antecedents.shape
        first, rest = self.antecedent_scorer[0], self.antecedent_scorer[1:]
        dim = spans.shape[1]
        w_i, w_j, w_pair, w_distance = first.weight.split([dim, dim, dim, first.in_features - 3 * dim], dim=1)
        per_span_i = spans @ w_i.T + first.bias  # (k, H)
        per_span_j = spans @ w_j.T  # (k, H)
        per_distance = self.distance_embedding(distance_bucket(back)) @ w_distance.T  # (A, H)
        block = k if torch.is_grad_enabled() and self.training else max(1, self.PAIR_FLOATS // (n_back * dim))
        out = []
        for lo in range(0, k, block):
            ante = antecedents[lo : lo + block]
            products = spans[lo : lo + block].unsqueeze(1) * rows_at(spans, ante)  # (b, A, dim)
            hidden = products @ w_pair.T + per_span_i[lo : lo + block].unsqueeze(1) + rows_at(per_span_j, ante)
            hidden = hidden + per_distance
            out.append(rest(hidden).squeeze(-1))
        return torch.cat(out) if len(out) > 1 else out[0]

    @staticmethod
    def gold_cluster_of_spans(starts, ends, batch) -> torch.Tensor:
        """Each span's gold cluster id (-1 when it is not a gold mention)."""
        gold = {
            (int(s), int(e)): int(c)
            for s, e, c in zip(batch["gold_starts"], batch["gold_ends"], batch["gold_clusters"])
        }
        return torch.tensor(
            [gold.get((int(s), int(e)), -1) for s, e in zip(starts, ends)], dtype=torch.long, device=starts.device
        )

    def loss_of(self, out: dict, batch: dict) -> torch.Tensor:
        """The negative marginal log-likelihood of every kept span's gold antecedents."""
        cluster = self.gold_cluster_of_spans(out["starts"], out["ends"], batch)
        same = (cluster[out["antecedents"]] == cluster.unsqueeze(1)) & (cluster.unsqueeze(1) >= 0) & out["valid"]
        gold = torch.cat([~same.any(dim=1, keepdim=True), same], dim=1)  # ε is gold when no antecedent is
        scores = out["scores"]
        return (torch.logsumexp(scores, 1) - torch.logsumexp(scores.masked_fill(~gold, float("-inf")), 1)).sum()

    @torch.no_grad()
    def decode(self, out: dict, batch: dict) -> list[list[list[list[int]]]]:
        """The document's predicted clusters (lists of [start, end] word offsets), as a one-element
        list: a batch is one document."""
        best = out["scores"].argmax(dim=1).tolist()
        starts, ends, antecedents = out["starts"].tolist(), out["ends"].tolist(), out["antecedents"].tolist()
        cluster_of, clusters = {}, []
        for i, choice in enumerate(best):
            if choice == 0:
                continue
            j = antecedents[i][choice - 1]
            antecedent, mention = (starts[j], ends[j]), (starts[i], ends[i])
            if antecedent not in cluster_of:
                cluster_of[antecedent] = len(clusters)
                clusters.append([list(antecedent)])
            cluster_of[mention] = cluster_of[antecedent]
            clusters[cluster_of[antecedent]].append(list(mention))
        return [clusters]
