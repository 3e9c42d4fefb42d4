"""BERT pretraining (bert_core): the MLM + NSP instances, the 80/10/10 masking as configured,
exact resume, held-out accuracy per source, and the saved model loading with the Auto classes."""

import json
import random

import pytest
import torch
from tiny_models import tiny_args

from bert_core.bert_pretrain import SeededMasking, build_parser, train
from bert_core.pretraining_data import ListDocument, PairStream, encode_pair


def numbered_documents(n_docs=3, n_sentences=60):
    """Sentence s of document d is the single piece id d*1000 + s: segments reveal where they came from."""
    return [ListDocument([[f"{d}:{s}"] for s in range(n_sentences)]) for d in range(n_docs)]


def piece_of_word(words):
    d, s = words[0].split(":")
    return [int(d) * 1000 + int(s)]


def test_pairs_true_next_continue_random_next_come_from_another_document():
    stream = PairStream(numbered_documents(), piece_of_word, max_length=12, seed=3)
    instances = list(stream.instances())
    assert instances
    random_count = 0
    for inst in instances:
        assert len(inst.segment_a) + len(inst.segment_b) <= 12 - 3
        doc_a = {i // 1000 for i in inst.segment_a}
        doc_b = {i // 1000 for i in inst.segment_b}
        assert doc_a == {inst.document}
        if inst.is_random_next:
            random_count += 1
            assert doc_b.isdisjoint(doc_a)
        else:
            assert doc_b == doc_a
            assert inst.segment_b[0] == inst.segment_a[-1] + 1 or len(inst.segment_a) + len(inst.segment_b) == 9
    share = random_count / len(instances)
    assert 0.4 < share < 0.75  # 1/2, plus single-sentence chunks that can only be random


def test_every_sentence_is_read_and_files_are_mixed_along_the_stream():
    docs = numbered_documents(n_docs=3, n_sentences=200)
    stream = PairStream(docs, piece_of_word, max_length=12, seed=0, short_prob=0.0)
    instances = list(stream.instances())
    seen_a = {i for inst in instances for i in inst.segment_a}
    assert len(seen_a) > 0.6 * 600  # A takes most sentences; B the rest of each true chunk
    first_third = [inst.document for inst in instances[: len(instances) // 3]]
    assert set(first_third) == {0, 1, 2}  # interleaved, not one document after another


def test_resume_by_skipping_gives_the_same_tail():
    stream = PairStream(numbered_documents(), piece_of_word, max_length=12, seed=5)
    full = list(stream.instances(epoch=1))
    tail = list(stream.instances(epoch=1, skip=17))
    assert tail == full[17:]
    assert list(stream.instances(epoch=2)) != full  # another epoch, another order


def test_masking_is_15_percent_then_80_10_10():
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(500)]
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=False)
    collator = SeededMasking(tokenizer, seed=0)
    rng = random.Random(0)
    rows = [
        {
            "input_ids": [2] + [rng.randrange(5, 505) for _ in range(200)] + [3],
            "token_type_ids": [0] * 202,
            "next_sentence_label": 0,
        }
        for _ in range(200)
    ]
    original = torch.tensor([r["input_ids"] for r in rows])
    batch = collator([dict(r) for r in rows])
    chosen = batch["labels"] != -100
    assert not chosen[:, 0].any() and not chosen[:, -1].any()  # never [CLS]/[SEP]
    assert abs(chosen.float().mean().item() * 202 / 200 - 0.15) < 0.01
    assert torch.equal(batch["labels"][chosen], original[chosen])
    as_mask = (batch["input_ids"] == 4) & chosen
    unchanged = (batch["input_ids"] == original) & chosen
    n = chosen.sum().item()
    assert abs(as_mask.sum().item() / n - 0.8) < 0.02
    assert abs(unchanged.sum().item() / n - 0.1 - 0.1 / 500) < 0.02  # random picks the same piece 1/500
    assert abs((n - as_mask.sum().item() - unchanged.sum().item()) / n - 0.1) < 0.02


def test_interrupted_training_resumes_exactly(tmp_path):
    straight = train(build_parser().parse_args(tiny_args(tmp_path, "straight")))
    assert straight["progress"]["finished"]
    resumed_losses = []
    for _ in range(10):  # --max-minutes ~0: one update per invocation, then checkpoint and stop
        result = train(build_parser().parse_args(tiny_args(tmp_path, "resumed", max_minutes=1e-9)))
        resumed_losses += result["losses"]
        if result["progress"]["finished"]:
            break
    assert result["progress"]["finished"] and len(resumed_losses) == 6
    assert resumed_losses == straight["losses"]
    from transformers import AutoModel

    a = AutoModel.from_pretrained(str(tmp_path / "straight" / "model"))
    b = AutoModel.from_pretrained(str(tmp_path / "resumed" / "model"))
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name


def test_checkpoint_of_other_settings_is_refused(tmp_path):
    train(build_parser().parse_args(tiny_args(tmp_path, "run", max_minutes=1e-9)))
    from suite_common.errors import WeightsError

    with pytest.raises(WeightsError, match="other settings"):
        train(build_parser().parse_args(tiny_args(tmp_path, "run", max_minutes=1e-9, lr=1e-3)))


def test_saved_model_loads_with_auto_classes_and_reports_heldout(tmp_path):
    result = train(build_parser().parse_args(tiny_args(tmp_path, "m")))
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert summary["heldout"]["overall"]["pairs"] > 0
    assert 0 <= summary["heldout"]["overall"]["mlm_accuracy"] <= 100
    assert summary["progress"]["step"] == 6 == len(result["losses"])
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path / "m" / "model"))
    model = AutoModel.from_pretrained(str(tmp_path / "m" / "model"))
    enc = tokenizer(["the", "cat", "sat"], is_split_into_words=True, return_tensors="pt")
    out = model(**enc, output_hidden_states=True)
    assert len(out.hidden_states) == 3 and out.hidden_states[-1].shape[-1] == 16
    pair = encode_pair(type("I", (), {"segment_a": [7, 8], "segment_b": [9], "is_random_next": True})(), 2, 3)
    assert pair == {"input_ids": [2, 7, 8, 3, 9, 3], "token_type_ids": [0, 0, 0, 0, 1, 1], "next_sentence_label": 1}


def test_a_corpus_of_one_file_takes_random_next_from_elsewhere_in_it():
    stream = PairStream(numbered_documents(n_docs=1, n_sentences=80), piece_of_word, max_length=12, seed=1)
    instances = list(stream.instances())
    randoms = [i for i in instances if i.is_random_next]
    assert randoms and len(randoms) < len(instances)
    for inst in randoms:
        after_a = inst.segment_a[-1] + 1
        assert inst.segment_b[0] != after_a  # never the true next sentence
        assert not set(inst.segment_b) & set(inst.segment_a)


def test_evaluate_a_saved_model_alone_gives_the_training_summary(tmp_path, capsys):
    from bert_core.bert_pretrain import main

    train(build_parser().parse_args(tiny_args(tmp_path, "m")))
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    capsys.readouterr()
    main(
        [
            "--evaluate",
            str(tmp_path / "m" / "model"),
            "--heldout",
            str(tmp_path / "heldout.txt"),
            "--max-length",
            "24",
            "--batch-size",
            "4",
            "--device",
            "cpu",
        ]
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["overall"]["pairs"] > 0
    for key in ("mlm_accuracy", "nsp_accuracy", "masked_pieces", "pairs"):
        assert printed["overall"][key] == pytest.approx(summary["heldout"]["overall"][key])
    with pytest.raises(SystemExit, match="training needs --train"):
        main(["--out", str(tmp_path / "x")])
