"""Coreference (§4): the CoNLL-2012 reader and writer, and MUC / B³ / CEAFφ4 against hand computations."""

import pytest
from conftest import shared_path

from experiments.run_config import as_run
from suite_common.errors import DataError
from tasks.coref.metric import coref_scores
from tasks.coref.reader import parse_coref_column, read_conll2012_coref, write_conll2012_coref


def _doc(rows: list[str], name="d", part="0") -> str:
    """A LitBank-style document: one token per row as 'token coref', '' for a sentence break."""
    lines, index = [f"#begin document ({name}); part {part}"], 0
    for row in rows:
        if not row:
            lines.append("")
            index = 0
            continue
        token, coref = row.split()
        lines.append("\t".join([name, part, str(index), token] + ["_"] * 8 + [coref]))
        index += 1
    return "\n".join(lines + ["#end document"]) + "\n"


def _read(tmp_path, text):
    path = tmp_path / "x.conll"
    path.write_text(text)
    return read_conll2012_coref(path)


def test_reader_nested_multi_cluster_and_singleton_mentions(tmp_path):
    ds, stats = _read(
        tmp_path,
        _doc(["A (0", "stranger _", "from _", "South (1", "Carolina 1)|0)", "", "he (0)", "saw (2|(3)", "it 2)"])
        + _doc(["x (0)"], "e", "1"),
    )
    first = ds[0]
    assert first["doc_key"] == "d_0" and first["sentences"] == [
        ["A", "stranger", "from", "South", "Carolina"],
        ["he", "saw", "it"],
    ]
    # clusters by id: 0 = {A..Carolina, he}, 1 = {South Carolina} (nested in 0's first mention),
    # 2 = {saw it}, 3 = {saw} (overlapping 2)
    assert first["clusters"] == [[[0, 4], [5, 5]], [[3, 4]], [[6, 7]], [[6, 6]]]
    assert ds[1]["doc_key"] == "e_1" and ds[1]["clusters"] == [[[0, 0]]]  # clusters are per document
    assert stats == {"documents": 2, "tokens": 9, "mentions": 6, "clusters": 5}


def test_reader_same_cluster_nested_in_itself(tmp_path):
    ds, _ = _read(tmp_path, _doc(["the (4", "man (4", "'s 4)", "dog 4)"]))
    assert ds[0]["clusters"] == [[[0, 3], [1, 2]]]  # the inner ')' closes the most recent '('


@pytest.mark.parametrize(
    "rows,message",
    [
        (["a 3)"], r"x.conll:2: '3\)' closes a mention of cluster 3 that was never opened"),
        (["a (3", "b _"], r"x.conll:2: '\(3' is never closed before the end of document d_0"),
        (["a (3x"], r"x.conll:2: malformed coreference column '\(3x' \(left over: 'x'\)"),
        (["a 3"], r"x.conll:2: malformed coreference column '3'"),
        (["a (1|x"], r"x.conll:2: malformed coreference column '\(1\|x'"),
    ],
)
def test_reader_malformed_brackets_name_file_and_line(tmp_path, rows, message):
    with pytest.raises(DataError, match=message):
        _read(tmp_path, _doc(rows))


def test_reader_structure_errors(tmp_path):
    with pytest.raises(DataError, match=r"x.conll:1: a token line outside"):
        _read(tmp_path, "d\t0\t0\ta\t_\t_\t-\n")
    with pytest.raises(DataError, match=r"has no '#end document'"):
        _read(tmp_path, _doc(["a -"]).replace("#end document\n", ""))
    with pytest.raises(DataError, match=r"x.conll:3: expected at least 2 columns"):
        _read(tmp_path, _doc(["a -"]).replace("#end document", "d\n#end document"))
    with pytest.raises(DataError, match="no documents"):
        _read(tmp_path, "\n")


def test_reader_reads_the_ontonotes_fixture_unchanged():
    ds, stats = read_conll2012_coref(shared_path("data/fixtures/conll2012/coref.gold_conll"))
    assert stats["documents"] == 4 and ds[0]["doc_key"] == "bc/cctv/00/cctv_0000_000"
    first = ds[0]
    tokens = [t for s in first["sentences"] for t in s]
    # "Hong Kong" (23 ... 23)) and the two "(18" mentions of the second sentence
    mentions = {tuple(m): " ".join(tokens[m[0] : m[1] + 1]) for c in first["clusters"] for m in c}
    assert "Hong Kong" in mentions.values() and "their" in mentions.values()
    assert "these well - known cartoon images" in mentions.values()
    assert parse_coref_column("(23|23)", "x") == [("open", 23), ("close", 23)]
    assert (
        parse_coref_column("3)|(12)|(7", "x")
        == parse_coref_column("3)(12)(7", "x")
        == [("single", 12), ("open", 7), ("close", 3)]
    )  # the scorer's order, with or without '|'


def test_writer_round_trip(tmp_path):
    ds, _ = _read(tmp_path, _doc(["A (0", "stranger _", "South (1", "Carolina 1)|0)", "", "he (0)"]))
    out = write_conll2012_coref(tmp_path / "pred.conll", ds, [[[[0, 3], [4, 4]], [[2, 3]], [[1, 1]]]])
    again, _ = read_conll2012_coref(out)
    assert again[0]["sentences"] == ds[0]["sentences"] and again[0]["doc_key"] == "d_0"
    assert again[0]["clusters"] == [[[0, 3], [4, 4]], [[2, 3]], [[1, 1]]]
    assert again[0]["columns"] == ds[0]["columns"]


# -------------------------------------------------------------------------------- metrics
A, B, C, D, E, F, G, H, I = "abcdefghi"  # noqa: E741 - mention names of the worked examples


def _check(scores, metric, p, r):
    assert scores[metric]["precision"] == pytest.approx(100 * p)
    assert scores[metric]["recall"] == pytest.approx(100 * r)
    f1 = 2 * p * r / (p + r) if p + r else 0
    assert scores[metric]["f1"] == pytest.approx(100 * f1)


def test_metrics_on_the_reference_scorers_worked_example():
    """Key {a b c} {d e f g}; response {a b} {c d} {f g h i} (Pradhan et al. 2014's example).
    MUC: recall (3-2 + 4-3)/(2+3) = 2/5, precision (1 + 0 + 1)/(1+1+3) = 2/5.
    B³: recall (4/3 + 1/3 + 1/4 + 4/4)/7 = 5/12, precision (4/2 + 2/2 + 4/4)/8 = 1/2.
    CEAFφ4: φ(K1,R1) = 4/5, φ(K2,R3) = 1/2 is the best alignment (1.3): recall 1.3/2, precision 1.3/3."""
    s = coref_scores([[[A, B, C], [D, E, F, G]]], [[[A, B], [C, D], [F, G, H, I]]])
    _check(s, "muc", 2 / 5, 2 / 5)
    _check(s, "b_cubed", 1 / 2, 5 / 12)
    _check(s, "ceafe", 1.3 / 3, 1.3 / 2)
    assert s["conll_f1"] == pytest.approx((s["muc"]["f1"] + s["b_cubed"]["f1"] + s["ceafe"]["f1"]) / 3)


def test_metrics_singletons():
    """Key {a} {b c}; response {b c}: MUC ignores the singleton (1/1, 1/1); B³ recall (0 + 2)/3,
    precision 2/2; CEAFφ4 recall 1/2 (one of two key clusters), precision 1/1."""
    s = coref_scores([[[A], [B, C]]], [[[B, C]]])
    _check(s, "muc", 1, 1)
    _check(s, "b_cubed", 1, 2 / 3)
    _check(s, "ceafe", 1, 1 / 2)
    perfect = coref_scores([[[A], [B, C]]], [[[A], [B, C]]])
    assert perfect["conll_f1"] == pytest.approx(100)


def test_metrics_response_mention_not_in_the_key():
    """Key {a b}; response {a b x}: MUC recall 1/1, precision (3-2)/2; B³ recall (4/2)/2,
    precision (4/3)/3; CEAFφ4 φ = 4/5 both ways."""
    s = coref_scores([[[A, B]]], [[[A, B, "x"]]])
    _check(s, "muc", 1 / 2, 1)
    _check(s, "b_cubed", 4 / 9, 1)
    _check(s, "ceafe", 4 / 5, 4 / 5)


def test_metrics_empty_response_and_micro_average_over_documents():
    s = coref_scores([[[A, B]]], [[]])
    for metric in ("muc", "b_cubed", "ceafe"):
        _check(s, metric, 0, 0)
    assert s["conll_f1"] == 0
    # two documents: counts are summed before dividing (document 2 has MUC denominator 3, document 1 has 1)
    s = coref_scores([[[A, B]], [[A, B, C, D]]], [[[A, B]], [[A, B], [C, D]]])
    _check(s, "muc", (1 + 2) / (1 + 2), (1 + 2) / (1 + 3))


# -------------------------------------------------------------------------------- model
def test_candidate_spans_stay_inside_sentences_and_width():
    import torch

    from tasks.common.layers import ElmoFeatures
    from tasks.coref.model import CorefModel

    cfg = as_run(
        {
            "task": {
                "name": "coref",
                "model": {
                    "word_dim": 4,
                    "vectors": None,
                    "char_dim": 2,
                    "char_filters": 0,
                    "char_width": 3,
                    "hidden": 3,
                    "ffnn_size": 4,
                    "ffnn_depth": 1,
                    "feature_size": 2,
                    "max_span_width": 2,
                    "span_ratio": 0.4,
                    "max_antecedents": 3,
                    "lexical_dropout": 0.0,
                    "dropout": 0.0,
                },
            }
        }
    ).task
    model = CorefModel(
        ["<pad>", "<unk>"], cfg, ElmoFeatures("none", 3, 4, mix="all", layer_norm=False, dropout=0.5, l2=0.0)
    )
    starts, ends = model.candidate_spans(torch.tensor([0, 0, 0, 1, 1]))
    assert list(zip(starts.tolist(), ends.tolist())) == [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (3, 3), (3, 4), (4, 4)]


def test_pruning_keeps_the_best_non_crossing_spans_in_document_order():
    import torch

    from tasks.coref.model import distance_bucket, prune_spans

    starts, ends = torch.tensor([0, 1, 1, 3, 2]), torch.tensor([2, 3, 1, 4, 4])
    scores = torch.tensor([3.0, 2.0, 1.0, 0.5, 0.4])
    # (1,3) crosses (0,2); (1,1) nests inside it; (2,4) crosses (0,2)
    assert prune_spans(scores, starts, ends, 3).tolist() == [0, 2, 3]
    assert prune_spans(scores, starts, ends, 1).tolist() == [0]
    assert distance_bucket(torch.tensor([1, 2, 4, 5, 7, 8, 15, 16, 63, 64, 500])).tolist() == [
        0,
        1,
        3,
        4,
        4,
        5,
        5,
        6,
        7,
        8,
        8,
    ]


def test_padding_never_changes_a_score(bilm_files, tmp_path):
    """The same document with its sentences padded further: identical spans, antecedents and scores."""
    import torch
    from task_setups import new_model as _new_model
    from task_setups import task_setup as _setup

    cfg, task, source, data = _setup("coref", bilm_files, tmp_path)
    model = _new_model(cfg, task, source).eval()
    batch = task.make_batch(data["dev"], [1])
    padded = dict(batch)
    extra = 3
    for key in ("word_ids", "char_ids", "mask"):
        pad = torch.zeros(*batch[key].shape[:1], extra, *batch[key].shape[2:], dtype=batch[key].dtype)
        padded[key] = torch.cat([batch[key], pad], dim=1)
    layers = batch["layers"]
    padded["layers"] = torch.cat([layers, layers.new_zeros(*layers.shape[:2], extra, layers.shape[3])], dim=2)
    padded["layer_mask"] = padded["mask"]
    with torch.no_grad():
        a, b = model(batch).scores, model(padded).scores
    for key in ("starts", "ends", "antecedents"):
        assert torch.equal(a[key], b[key])
    torch.testing.assert_close(a["scores"], b["scores"], atol=1e-5, rtol=0)
    assert a["scores"].shape[1] == 1 + min(cfg.task.model.max_antecedents, a["starts"].shape[0] - 1)


def test_a_tiny_coref_run_is_deterministic_and_writes_scorer_files(bilm_files, tmp_path):
    from conftest import REPO
    from hydra import compose, initialize_config_dir
    from task_setups import TASKS

    from experiments import runner

    o, w = bilm_files
    results = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[
                    "task=coref",
                    *TASKS["coref"],
                    f"encoder.options={o}",
                    f"encoder.weights={w}",
                    f"cache.dir={tmp_path / 'cache'}",
                    "elmo.position=input",
                    "trainer.max_epochs=2",
                    "trainer.min_updates=0",
                    "task.model.word_dim=8",
                    f"runs_root={tmp_path / run / 'root'}",
                ],
            )
        results.append(runner.train(as_run(cfg), out))
    assert results[0]["dev"] == results[1]["dev"] and results[0]["metric"] == "conll_f1"
    predictions = (tmp_path / "a" / "dev_predictions.conll").read_text()
    assert predictions == (tmp_path / "b" / "dev_predictions.conll").read_text()
    again, _ = read_conll2012_coref(tmp_path / "a" / "dev_predictions.conll")  # the writer's output reads back
    assert [d["doc_key"] for d in again] == ["tiny_a_0", "tiny_b_0", "tiny_c_0"]


def test_hub_copy_conversion_uses_document_offsets():
    """The OntoNotes hub schema (sentences with words and coref_spans [cluster, start, end],
    sentence-relative) becomes one document with document-level offsets; read offline here."""
    import datasets

    from tasks.coref import task as coref_task

    rows = [
        {
            "document_id": "bc/x/00/x_0000",
            "sentences": [
                {"part_id": 0, "words": ["John", "saw", "Mary", "."], "coref_spans": [[7, 0, 0], [9, 2, 2]]},
                {"part_id": 0, "words": ["He", "waved", "to", "her", "."], "coref_spans": [[7, 0, 0], [9, 3, 3]]},
            ],
        }
    ]
    ds, stats = coref_task.from_hf_conll2012_coref(datasets.Dataset.from_list(rows))
    assert stats == {"documents": 1}
    doc = ds[0]
    assert doc["doc_key"] == "bc/x/00/x_0000_0" and doc["sentences"][1][0] == "He"
    assert doc["clusters"] == [[[0, 0], [4, 4]], [[2, 2], [7, 7]]]


def test_scoring_in_blocks_of_spans_gives_the_scores_of_all_pairs_at_once(bilm_files, tmp_path, monkeypatch):
    """Scoring a document builds its pair vectors a block of spans at a time (bounded memory on long
    documents): the same spans, antecedents, scores and clusters as all pairs at once."""
    import torch
    from task_setups import new_model as _new_model
    from task_setups import task_setup as _setup

    from tasks.coref.model import CorefModel

    cfg, task, source, data = _setup("coref", bilm_files, tmp_path)
    model = _new_model(cfg, task, source).eval()
    batch = task.make_batch(data["dev"], [1])
    with torch.no_grad():
        whole = model(batch)
        monkeypatch.setattr(CorefModel, "PAIR_FLOATS", 1)  # one span per block
        blocks = model(batch)
    assert blocks.scores["scores"].shape[0] > 2  # several blocks
    for key in ("starts", "ends", "antecedents"):
        assert torch.equal(whole.scores[key], blocks.scores[key])
    torch.testing.assert_close(whole.scores["scores"], blocks.scores["scores"], atol=1e-6, rtol=0)
    assert model.decode(whole.scores, batch) == model.decode(blocks.scores, batch)


def test_pair_scores_split_by_term_equal_the_scorer_on_whole_pair_vectors():
    """The antecedent scorer's first layer applied term by term (per span, per distance, per pair only
    g_i∘g_j) gives what the same network gives on the concatenated [g_i; g_j; g_i∘g_j; φ(i, j)], in
    training (gradients too) and in scoring."""
    from types import SimpleNamespace

    import torch

    from tasks.coref.config import CorefModelConfig
    from tasks.coref.model import CorefModel, distance_bucket

    torch.manual_seed(0)
    features = SimpleNamespace(input_dim=0, output_dim=0)
    cfg = SimpleNamespace(model=CorefModelConfig(word_dim=6, char_filters=0, hidden=4, ffnn_size=5, dropout=0.0))
    model = CorefModel(["a", "b"], cfg, features)
    k, dim = 7, 2 * (2 * 4) + 6 + cfg.model.feature_size  # span vector: [h_start; h_end; attended x; width]
    back = torch.arange(1, 4)
    antecedents = (torch.arange(k).unsqueeze(1) - back).clamp(min=0)
    for training in (True, False):
        model.train(training)
        spans = torch.randn(k, dim, requires_grad=True)
        g_i, g_j = spans.unsqueeze(1).expand(-1, 3, -1), spans[antecedents]
        distance = model.distance_embedding(distance_bucket(back)).expand(k, -1, -1)
        direct = model.antecedent_scorer(torch.cat([g_i, g_j, g_i * g_j, distance], -1)).squeeze(-1)
        split = model.pair_scores(spans, antecedents, back)
        torch.testing.assert_close(split, direct, atol=1e-5, rtol=1e-5)
        if training:
            (grad_direct,) = torch.autograd.grad(direct.sum(), spans)
            (grad_split,) = torch.autograd.grad(model.pair_scores(spans, antecedents, back).sum(), spans)
            torch.testing.assert_close(grad_split, grad_direct, atol=1e-5, rtol=1e-5)
