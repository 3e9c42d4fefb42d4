"""biLM training: loss decreases, export round trip, exact resume, DDP == single process."""

import json
import os
import signal
import subprocess
import sys

import h5py
import pytest
import torch
from conftest import REPO, shared_path

from elmo_core import batch_to_ids, load_bilm
from elmo_core.pretrain import main as pretrain_main
from elmo_core.pretraining.lm_checkpoint import load_language_model
from elmo_core.pretraining.lm_data import LMStream, Vocabulary, expand_files, read_sentences
from elmo_core.pretraining.lm_training import evaluate_perplexity


@pytest.fixture
def corpus():
    return shared_path("data/fixtures/bilm_tf_train/data.txt")


def _args(corpus, out, *extra):
    return [
        "--preset",
        "tiny",
        "--train",
        str(corpus),
        "--heldout",
        str(corpus),
        "--out",
        str(out),
        "--batch-size",
        "4",
        "--unroll-steps",
        "5",
        "--min-count",
        "1",
        "--no-progress",
        *extra,
    ]


def _losses(out):
    return [json.loads(line)["loss"] for line in (out / "train_log.jsonl").read_text().splitlines()]


def test_stream_predicts_every_token_once_in_each_direction(corpus):
    vocab = Vocabulary.build([corpus], 1)
    expected = sum(len(s) + 1 for s in read_sentences(corpus))  # words + </S> (or <S> backwards)
    for batch_size, unroll in ((4, 5), (3, 7), (64, 20)):
        stream = LMStream([corpus], vocab, batch_size, unroll, seed=1)
        batches = list(stream.batches(0))
        assert sum(int((b.forward_targets >= 0).sum()) for b in batches) == expected
        assert sum(int((b.backward_targets >= 0).sum()) for b in batches) == expected
        assert [b.lengths.tolist() for b in stream.batches(0, skip=2)] == [b.lengths.tolist() for b in batches[2:]]


def test_backward_stream_reads_sentences_reversed(corpus, tmp_path):
    (tmp_path / "c.txt").write_text("a b c d\n")
    vocab = Vocabulary.build([tmp_path / "c.txt"], 1)
    batches = list(LMStream([tmp_path / "c.txt"], vocab, 1, 2, shuffle=False).batches(0))
    words = lambda t: [vocab.words[i] for i in t[0] if i >= 0]
    assert [words(b.forward_targets) for b in batches] == [["a", "b"], ["c", "d"], ["</S>"]]
    # the backward LM continues the reversed sentence across batches
    assert [words(b.backward_targets) for b in batches] == [["d", "c"], ["b", "a"], ["<S>"]]


def test_trains_exports_and_reloads(corpus, tmp_path):
    out = tmp_path / "run"
    pretrain_main(_args(corpus, out, "--epochs", "12"))
    losses = _losses(out)
    per_epoch = len(losses) // 12
    # clearly decreasing: the last epoch's mean loss at least 0.25 nats below the first's (seeds 0-5 of this
    # run: 0.36-0.46 below; with --lr 0, seeds 0-3: from 0.10 above to 0.01 above)
    assert sum(losses[-per_epoch:]) < sum(losses[:per_epoch]) - 0.25 * per_epoch
    summary = json.loads((out / "summary.json").read_text())
    assert summary["progress"]["finished"] and summary["heldout_perplexity"]["tokens"] == 139
    # the exported files are the original format: the core loader gives the trained biLM exactly
    lm, vocab, meta = load_language_model(out)
    assert meta["softmax"] == "loaded" and len(vocab) == summary["vocab_size"]
    reloaded = load_bilm(out / "options.json", out / "weights.hdf5")
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)["model"]
    trained = lm.bilm
    trained.load_state_dict({k[len("bilm.") :]: v for k, v in ckpt.items() if k.startswith("bilm.")})
    ids = batch_to_ids([["neural", "networks", "avoid", "this", "problem"], ["unseen", "wordz"]])
    with torch.no_grad():
        assert torch.equal(trained.eval()(ids).layers, reloaded(ids).layers)
    with h5py.File(out / "weights.hdf5") as f:
        assert "softmax" in f and "char_embed" in f and f["char_embed"].shape[0] == 261
    # the model card's perplexity is recomputed from the exported files
    stream = LMStream(expand_files([str(corpus)]), vocab, 4, 5, shuffle=False)
    ppl = evaluate_perplexity(lm, stream)
    assert abs(ppl.average - summary["heldout_perplexity"]["average"]) < 1e-2


def test_resume_follows_the_uninterrupted_trajectory(corpus, tmp_path):
    pretrain_main(_args(corpus, tmp_path / "a", "--max-steps", "9", "--epochs", "5"))
    pretrain_main(_args(corpus, tmp_path / "b", "--max-steps", "4", "--epochs", "5"))
    pretrain_main(_args(corpus, tmp_path / "b", "--max-steps", "9", "--epochs", "5"))  # crosses an epoch
    a, b = _losses(tmp_path / "a"), _losses(tmp_path / "b")
    assert len(a) == len(b) == 9
    assert a == b  # dropout masks, data position and LSTM states all restored
    # an interrupted run's log past its last checkpoint is dropped on resume: one step, one line
    with open(tmp_path / "b" / "train_log.jsonl", "a") as f:
        f.write(json.dumps({"step": 10, "epoch": 1, "loss": 0.0}) + "\n")
    pretrain_main(_args(corpus, tmp_path / "b", "--max-steps", "11", "--epochs", "5"))
    steps = [json.loads(line)["step"] for line in (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 12))


def test_a_stop_signal_checkpoints_exports_and_the_run_goes_on_exactly(corpus, tmp_path):
    """SIGTERM (a scheduler's stop, Ctrl-C alike) ends training after the update it is in, with a checkpoint
    and an export; resumed, the run reads on as an uninterrupted one."""
    import time

    argv = [sys.executable, "-m", "elmo_core.pretrain", *_args(corpus, tmp_path / "b", "--epochs", "500")]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.Popen(
        [*argv, "--checkpoint-every", "100000"], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True
    )
    log = tmp_path / "b" / "train_log.jsonl"
    deadline = time.time() + 120
    while (not log.exists() or log.read_text().count("\n") < 5) and time.time() < deadline:
        time.sleep(0.1)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 0 and "stopping after this update (SIGTERM)" in err, err[-2000:]
    steps = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)["progress"]["step"]
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["progress"]["step"] == steps == len(_losses(tmp_path / "b")) >= 5  # nothing lost, nothing extra
    # on one thread, as the stopped process ran: two threads split the work otherwise (equal to rounding only)
    for out in (tmp_path / "b", tmp_path / "a"):
        pretrain_main(_args(corpus, out, "--max-steps", str(steps + 3), "--epochs", "500", "--threads", "1"))
    assert _losses(tmp_path / "b") == _losses(tmp_path / "a")


def test_bad_checkpoints_are_refused(corpus, tmp_path):
    out = tmp_path / "run"
    pretrain_main(_args(corpus, out, "--max-steps", "2"))
    with pytest.raises(SystemExit, match="made for a different run.*batch_size"):
        pretrain_main(_args(corpus, out, "--max-steps", "4", "--batch-size", "2"))
    data = (out / "checkpoint.pt").read_bytes()
    (out / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(SystemExit, match="corrupt or unreadable checkpoint"):
        pretrain_main(_args(corpus, out, "--max-steps", "4"))


def _kill_processes_mentioning(marker: str) -> None:
    """torchrun starts its workers in sessions of their own: find them by their command line."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def _run_group(cmd, env, marker: str, timeout=120):
    proc = subprocess.Popen(cmd, env=env)
    try:
        assert proc.wait(timeout=timeout) == 0, f"{cmd[2]} failed"
    except subprocess.TimeoutExpired:
        _kill_processes_mentioning(marker)
        proc.kill()
        proc.wait()
        pytest.fail(f"timed out after {timeout}s: {' '.join(cmd)}")


def test_ddp_two_gloo_workers_match_one_process(corpus, tmp_path):
    common = _args(corpus, tmp_path / "x", "--max-steps", "6", "--dropout", "0", "--device", "cpu", "--threads", "1")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    one = [a if a != str(tmp_path / "x") else str(tmp_path / "one") for a in common]
    two = [a if a != str(tmp_path / "x") else str(tmp_path / "two") for a in common]
    _run_group([sys.executable, "-m", "elmo_core.pretrain", *one], env, str(tmp_path / "one"))
    _run_group(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            "29533",
            "-m",
            "elmo_core.pretrain",
            *two,
        ],
        env,
        str(tmp_path / "two"),
    )
    a, b = _losses(tmp_path / "one"), _losses(tmp_path / "two")
    assert len(a) == len(b) == 6
    assert max(abs(x - y) for x, y in zip(a, b)) < 1e-4
    assert a[0] != a[-1]


def test_domain_finetuning_reports_perplexity_before_and_after(corpus, tmp_path):
    pretrain_main(_args(corpus, tmp_path / "base", "--epochs", "2"))
    (tmp_path / "task.txt").write_text(
        "neural networks avoid this problem .\nthese models make use of neural networks .\n" * 20
    )
    args = _args(tmp_path / "task.txt", tmp_path / "ft", "--epochs", "3")
    args[args.index("--preset") : args.index("--preset") + 2] = ["--init-from", str(tmp_path / "base")]
    pretrain_main(args)
    summary = json.loads((tmp_path / "ft" / "summary.json").read_text())
    before, after = summary["heldout_perplexity_before"], summary["heldout_perplexity"]
    assert after["average"] < before["average"]  # adapted to the (repetitive) task text
    # fine-tuning keeps the base model's vocabulary (and so its softmax)
    assert (tmp_path / "ft" / "vocab.txt").read_text() == (tmp_path / "base" / "vocab.txt").read_text()


def test_fine_tuning_is_seeded_like_training_from_scratch(corpus, tmp_path):
    """--seed sets the dropout masks of a fine-tuning run (--init-from) too: the same command twice gives the
    same weights (it did not: the process's random state, drawn at start-up, set the masks)."""
    pretrain_main(_args(corpus, tmp_path / "base", "--epochs", "1"))

    def finetuned(out, seed):
        args = _args(corpus, tmp_path / out, "--epochs", "1", "--dropout", "0.3", "--seed", str(seed))
        args[args.index("--preset") : args.index("--preset") + 2] = ["--init-from", str(tmp_path / "base")]
        torch.manual_seed(len(out))  # whatever state the process is in, the run's own seed decides
        pretrain_main(args)
        with h5py.File(tmp_path / out / "weights.hdf5") as f:
            return {k: f[k][()] for k in _datasets(f)}

    first, again, other = finetuned("ft_a", 0), finetuned("ft_again", 0), finetuned("ft_seed1", 1)
    assert all((first[k] == again[k]).all() for k in first)
    assert any((first[k] != other[k]).any() for k in first)


def _datasets(group, prefix=""):
    for key, item in group.items():
        if isinstance(item, h5py.Group):
            yield from _datasets(item, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}"


def test_perplexity_state_policies(corpus, tmp_path):
    pretrain_main(_args(corpus, tmp_path / "m", "--epochs", "3"))
    lm, vocab, _ = load_language_model(tmp_path / "m")
    stream = LMStream(expand_files([str(corpus)]), vocab, 2, 5, shuffle=False)
    stateful = evaluate_perplexity(lm, stream)
    stateless = evaluate_perplexity(lm, stream, stateful=False)
    warm = evaluate_perplexity(lm, stream, warmup_batches=3)
    assert stateful.tokens == stateless.tokens == warm.tokens == 139  # every token scored once, whatever the policy
    assert len({round(p.average, 6) for p in (stateful, stateless, warm)}) == 3


def test_perplexity_in_a_smaller_vocabularys_event_space(corpus, tmp_path):
    """Scored in another vocabulary's event space, a target that vocabulary lacks gets the summed
    probability of every word it lacks (with <UNK>): checked against the full softmax, word by word."""
    from elmo_core.bilm import BiLM
    from elmo_core.options import parse_options
    from elmo_core.pretrain import PRESETS
    from elmo_core.pretraining.lm_training import LanguageModel, fold_mask

    torch.manual_seed(0)
    vocab = Vocabulary.build([corpus], 1)
    lm = LanguageModel(BiLM(parse_options(PRESETS["tiny"], "tiny")), len(vocab)).eval()
    smaller = Vocabulary(vocab.words[: len(vocab) // 2])
    fold = fold_mask(vocab, smaller)
    assert fold[vocab.unk] and int(fold[: len(vocab) // 2].sum()) == 1 and fold[len(vocab) // 2 :].all()
    stream = LMStream([corpus], vocab, 4, 5, shuffle=False)
    same = evaluate_perplexity(lm, stream, fold=fold_mask(vocab, vocab))  # folding into itself: only <UNK>
    assert same == evaluate_perplexity(lm, stream)
    folded = evaluate_perplexity(lm, stream, False, fold=fold)
    nll, count = torch.zeros(2, dtype=torch.float64), 0
    with torch.no_grad():  # by hand: the full distribution of every position, the lacking words summed
        for batch in stream.batches(0):
            lengths = torch.from_numpy(batch.lengths)
            for d, (chars, targets) in enumerate(
                ((batch.forward_chars, batch.forward_targets), (batch.backward_chars, batch.backward_targets))
            ):
                chars, targets = torch.from_numpy(chars), torch.from_numpy(targets)
                zero = lm.bilm.zero_state(4, "cpu")[d * 2 : (d + 1) * 2]  # stateless, as scored above
                top = lm.bilm.run_direction(d, lm.bilm.embed_tokens(chars, lengths), lengths, zero, 0.0)[0][-1]
                valid = (torch.arange(5)[None] < lengths[:, None]) & (targets >= 0)
                full = lm.softmax.log_prob(top[valid]).double()
                for row, t in zip(full, targets[valid]):
                    nll[d] -= torch.logsumexp(row[fold], 0) if fold[t] else row[t]
            count += int((batch.forward_targets >= 0).sum())
    expected = torch.exp(nll / count)
    assert folded.forward == pytest.approx(float(expected[0]), rel=1e-4)
    assert folded.backward == pytest.approx(float(expected[1]), rel=1e-4)
    assert folded.average < evaluate_perplexity(lm, stream, False).average  # fewer, larger events
    with pytest.raises(ValueError, match="words this model's lacks"):
        fold_mask(smaller, vocab)


def test_a_training_file_counts_by_its_content_not_its_path(tmp_path):
    """A pretraining checkpoint resumes with the same text moved elsewhere, and refuses the same path edited."""
    from types import SimpleNamespace

    from bert_core.bert_pretrain import identity_of
    from elmo_core.pretrain import training_identity

    a, b = tmp_path / "a.txt", tmp_path / "moved" / "b.txt"
    b.parent.mkdir()
    a.write_text("the same text\n"), b.write_text("the same text\n")
    args = SimpleNamespace(batch_size=2, unroll_steps=3, seed=0, stream_order="shuffled", vocab_size=10, hidden=4,
                           layers=1, heads=1, intermediate=8, max_length=16, lr=0.1, warmup_steps=0, weight_decay=0.0,
                           max_steps=1, tokenizer=None)  # fmt: skip
    lm = SimpleNamespace(bilm=SimpleNamespace(opts=SimpleNamespace(to_json_dict=lambda: {"n": 1})))
    vocab = SimpleNamespace(digest=lambda: "v")
    for identity in (
        lambda files: training_identity(args, lm, vocab, files, {}),
        lambda files: identity_of(args, files),
    ):
        before = identity([a])
        assert identity([b]) == before
        a.write_text("edited text\n")
        assert identity([a]) != before
        a.write_text("the same text\n")
