"""The activation cache and the biLM encoder behind it: reuse, corrupt entries rebuilt, state policies
kept apart, the fine-tuned biLM trained once."""

import errno
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import SAMPLES
from run_configs import compose_cfg

from encoders import BiLMEncoder
from encoders.activation_cache import ActivationCache
from experiments import runner, trained_runs
from experiments.run_config import as_run
from suite_common.machine import cpu_model


def test_cache_reuse_and_corrupt_rebuild(bilm_files, tmp_path):
    sentences = [["a", "b", "c"], ["d"], ["the", "cat", "sat", "down", "."]]
    cache = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2))
    before = ActivationCache.encoder_passes
    first = cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 2
    layers, mask = first.batch([2, 1])
    assert layers.shape == (3, 2, 5, 16) and mask.sum().item() == 6
    again = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2)).get(sentences)
    assert ActivationCache.encoder_passes == before + 2  # second run: zero biLM passes
    np.testing.assert_array_equal(again.sentence(2), first.sentence(2))
    expected = first.sentence(0).copy()
    directory = again.directory
    del first, again
    with open(directory / "layers.npy", "r+b") as f:  # flip bytes inside the data
        f.seek(-16, 2)
        f.write(b"\xff" * 16)
    rebuilt = cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 4
    np.testing.assert_array_equal(rebuilt.sentence(0), expected)
    (directory / "layers.npy").write_bytes((directory / "layers.npy").read_bytes()[:100])  # truncate
    cache.get(sentences)
    assert ActivationCache.encoder_passes == before + 6
    # a half-built entry (interrupted) is never visible under the final name
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")] == [directory.name]


def test_state_policies_are_cached_separately_and_warmup_runs_first(bilm_files, tmp_path):
    sentences = [["a", "b", "c"], ["d", "e"], ["the", "cat", "sat"], ["x"], ["y", "z"], ["q", "r", "s"]]
    layers = {}
    for state in ("stateless", "stateful", "stateful_warmup"):
        cache = ActivationCache(tmp_path / "c", BiLMEncoder(*bilm_files, state=state, batch_size=2, warmup_batches=2))
        before = ActivationCache.encoder_passes
        layers[state] = cache.get(sentences)
        assert ActivationCache.encoder_passes - before == 3 + (2 if state == "stateful_warmup" else 0)
    assert len([p for p in (tmp_path / "c").iterdir() if not p.name.startswith(".")]) == 3  # one entry per policy
    first = {k: v.sentence(0) for k, v in layers.items()}
    last = {k: v.sentence(5) for k, v in layers.items()}
    np.testing.assert_allclose(first["stateless"], first["stateful"], atol=1e-6)  # both start from zero
    assert not np.allclose(last["stateless"][1:], last["stateful"][1:])  # carried states change later batches
    assert not np.allclose(first["stateful"][1:], first["stateful_warmup"][1:])  # warmed-up from the first batch
    # the token layer has no state (equal up to float rounding: the two paths batch the words differently)
    np.testing.assert_allclose(first["stateless"][0], first["stateful_warmup"][0], atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="encoder.state must be one of"):
        BiLMEncoder(*bilm_files, state="sometimes")


def test_finetuned_biLM_is_trained_once_and_reported(tmp_path):
    from tiny_models import finetunable_bilm

    finetunable_bilm(tmp_path / "base")
    base = tmp_path / "base"
    results = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        cfg = compose_cfg(
            [
                "task=ner",
                f"data.dir={SAMPLES['ner']}",
                "data.train_file=ner_tiny.conll",
                "data.dev_file=ner_tiny.conll",
                f"encoder.options={base / 'options.json'}",
                f"encoder.weights={base / 'weights.hdf5'}",
                f"cache.dir={tmp_path / 'cache' / 'activations'}",
                "encoder.finetune=true",
                "elmo.position=input",
                "trainer.max_epochs=1",
                "trainer.min_updates=0",
                "task.model.hidden=[4]",
                "task.model.char_filters=2",
                f"seed={len(results)}",
            ]
        )
        results.append(runner.train(as_run(cfg), out))
    ft = results[0]["bilm_finetune"]
    assert ft["dev_perplexity_after"] < ft["dev_perplexity_before"]  # adapted to the task text
    assert ft["seed"] == 0  # the record says its fine-tuning was seeded (the report prefers it to an unseeded draw)
    assert results[0]["bilm"]["sha256"] != __import__("elmo_core").file_sha256(base / "weights.hdf5")
    fine_tuned = sorted(p.name for p in (tmp_path / "cache" / "finetuned").iterdir())
    assert fine_tuned == [".locks", ft["dir"].rsplit("/", 1)[1]]  # one fine-tuning, shared by both seeds
    assert results[1]["bilm_finetune"] == ft and results[1]["bilm"]["sha256"] == results[0]["bilm"]["sha256"]
    only = runner.finetune(as_run(cfg), tmp_path / "a")  # mode=finetune: the same cached biLM, reported on its own
    assert only["bilm_finetune"] == ft and only["bilm"]["sha256"] == __import__("elmo_core").file_sha256(
        base / "weights.hdf5"
    )
    saved = json.loads((tmp_path / "a" / "finetune.json").read_text())
    assert saved["task"] == "ner" and saved["command"] and saved["hardware"]["cpus"] >= 1
    assert saved["hardware"]["cpu"] == cpu_model() and saved["hardware"]["torch"] == torch.__version__
    # mode=evaluate scores such a model with the fine-tuned biLM it was trained on (it compared
    # the checkpoint's fine-tuned hash with the base biLM's and refused its own checkpoint)
    ev = compose_cfg(
        [
            "mode=evaluate",
            f"checkpoint={tmp_path / 'b'}",
            f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}",
            f"cache.dir={tmp_path / 'cache' / 'activations'}",
        ]
    )
    report = trained_runs.evaluate(as_run(ev))
    assert report["metrics"]["f1"] == pytest.approx(results[1]["dev"]["f1"])
    assert report["encoder"]["sha256"] == results[1]["bilm"]["sha256"]


SENTENCES = [["a", "b", "c"], ["d"], ["the", "cat", "sat", "down", "."], ["x", "y"]]


def test_the_batch_size_is_part_of_the_key(bilm_files, tmp_path):
    """The biLM's layers differ in their last bits with the batch size, so two batch sizes never share
    an entry (a cached run gives the same bytes whichever run filled the cache)."""
    keys = {b: ActivationCache(tmp_path, BiLMEncoder(*bilm_files, batch_size=b)).key(SENTENCES) for b in (1, 2, 3)}
    assert len(set(keys.values())) == 3


BUILD = textwrap.dedent("""
    import sys, time
    from encoders import BiLMEncoder
    from encoders.activation_cache import ActivationCache
    options, weights, root = sys.argv[1:4]
    encoder = BiLMEncoder(options, weights, batch_size=1)
    embed = encoder.embed
    def slow(sentences, name):  # long enough that the two builds overlap
        for item in embed(sentences, name):
            time.sleep(0.3)
            yield item
    object.__setattr__(encoder, "embed", slow)
    sentences = [["a", "b", "c"], ["d"], ["the", "cat", "sat", "down", "."], ["x", "y"]]
    ActivationCache(root, encoder).get(sentences)
    print("passes", ActivationCache.encoder_passes)
""")


def test_two_processes_on_one_cold_entry_both_finish_and_build_it_once(bilm_files, tmp_path):
    args = [sys.executable, "-c", BUILD, *map(str, bilm_files)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    jobs = [
        subprocess.Popen(
            args + [str(tmp_path / "shared")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    results = [job.communicate(timeout=120) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], [err[-2000:] for _, err in results]
    passes = sorted(int(out.split()[-1]) for out, _ in results)
    assert passes == [0, 4]  # one process built the entry, the other waited and read it
    alone = subprocess.run(args + [str(tmp_path / "alone")], capture_output=True, text=True, env=env)
    assert alone.returncode == 0, alone.stderr[-2000:]
    (entry,) = [p for p in (tmp_path / "shared").iterdir() if not p.name.startswith(".")]
    for name in ("layers.npy", "offsets.npy"):
        assert (entry / name).read_bytes() == (tmp_path / "alone" / entry.name / name).read_bytes()


def test_a_full_disk_during_a_build_is_one_line_and_leaves_nothing(bilm_files, tmp_path, monkeypatch):
    from suite_common.errors import StorageError

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    cache = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2))
    with pytest.raises(StorageError, match=r"cache.*cannot write \(the disk is full\)"):
        cache.get(SENTENCES)
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")] == []


def test_a_dead_builds_temporary_is_removed_before_free_space_is_measured(bilm_files, tmp_path):
    cache = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    from suite_common.atomic_files import temporary_path

    leftover = temporary_path(tmp_path / "cache" / cache.key(SENTENCES))
    leftover = leftover.with_name(leftover.name.rsplit("-", 1)[0] + f"-{dead.stdout.strip()}")
    leftover.mkdir(parents=True)
    (leftover / "layers.npy").write_bytes(b"\0" * 4096)
    assert cache.check_budget({"train": SENTENCES}, max_gb=None) > 0
    assert not leftover.exists()


def test_a_fine_tuned_biLM_made_before_fine_tuning_was_seeded_is_never_reused():
    """Its directory name (``seed=None``) differs from every seeded fine-tuning's of the same text."""
    from encoders.bilm import FINETUNE_SEED, finetune_key

    keys = {finetune_key("a" * 64, "train text", "dev text", 1, seed) for seed in (FINETUNE_SEED, None, 1)}
    assert len(keys) == 3
    assert finetune_key("a" * 64, "train text", "dev text", 1) == finetune_key("a" * 64, "train text", "dev text", 1, 0)


def _finetunable_encoder(tmp_path):
    """A tiny exported biLM as a run's encoder (cache under ``tmp_path/cache``), a text to fine-tune it on,
    and the key of that fine-tuning."""
    from tiny_models import finetunable_bilm

    from encoders.bilm import finetune_key
    from encoders.config import CacheConfig

    finetunable_bilm(tmp_path / "base")
    encoder = BiLMEncoder(
        tmp_path / "base" / "options.json",
        tmp_path / "base" / "weights.hdf5",
        cache_config=CacheConfig(dir=str(tmp_path / "cache" / "activations")),
        finetune_epochs=1,
    )
    text = (SAMPLES["ner"] / "ner_tiny.conll").read_text().split("\n\n")[0]
    return encoder, text, finetune_key(encoder.sha256, text, text, 1, compute=f"cpu threads {torch.get_num_threads()}")


def test_a_second_run_waits_for_the_first_ones_finetuning_and_reuses_it(tmp_path):
    """The runs of a parallel sweep share one fine-tuned biLM: while another process holds the fine-tuning
    (its lock), a run waits, then reads that fine-tuning instead of writing into it at the same time."""
    import fcntl
    import threading

    encoder, text, key = _finetunable_encoder(tmp_path)
    (tmp_path / "cache" / "finetuned" / ".locks").mkdir(parents=True)
    done = []
    with open(tmp_path / "cache" / "finetuned" / ".locks" / key, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process fine-tuning now
        second = threading.Thread(target=lambda: done.append(encoder.finetuned(text, text, "ner")))
        second.start()
        second.join(timeout=2)
        assert second.is_alive() and not (tmp_path / "cache" / "finetuned" / key).exists()
    second.join(timeout=300)
    assert done and done[0].finetune_report["dir"] == str(tmp_path / "cache" / "finetuned" / key)
    assert encoder.finetuned(text, text, "ner").finetune_report == done[0].finetune_report  # read, not trained again


def test_a_finetuning_is_moved_in_whole_and_another_hosts_finished_one_is_kept(tmp_path, monkeypatch):
    """The fine-tuned biLM's directory only ever holds a whole fine-tuning: an unfinished one left by an
    interrupted run is replaced, and when another host's process (no shared lock) put a finished one in
    place while this one trained, that one is kept and this one's partial directory removed."""
    import shutil

    import elmo_core.pretrain

    encoder, text, key = _finetunable_encoder(tmp_path)
    finetuned = tmp_path / "cache" / "finetuned"
    out = finetuned / key
    out.mkdir(parents=True)
    (out / "weights.hdf5").write_text("cut short")  # an interrupted fine-tuning, no finished summary
    first = encoder.finetuned(text, text, "ner").finetune_report
    assert sorted(p.name for p in finetuned.iterdir()) == [".locks", out.name]
    assert (out / "summary.json").is_file() and first["dev_perplexity_after"] < first["dev_perplexity_before"]

    other_host = tmp_path / "other_host"
    shutil.move(out, other_host)  # another host's finished one, put in place while this run fine-tunes
    real = elmo_core.pretrain.finetune

    def finetune_while_another_host_finishes(*args, **kwargs):
        result = real(*args, **kwargs)
        shutil.copytree(other_host, out)
        (out / "marker").write_text("the other host's")
        return result

    monkeypatch.setattr(elmo_core.pretrain, "finetune", finetune_while_another_host_finishes)
    assert encoder.finetuned(text, text, "ner").finetune_report == first
    assert (out / "marker").is_file() and sorted(p.name for p in finetuned.iterdir()) == [".locks", out.name]


def test_the_finetuning_seed_draws_its_masks_and_names_its_directory(tmp_path, monkeypatch):
    """``encoder.finetune_seed`` reaches the fine-tuning (its dropout masks) and its directory's name, so
    the fine-tunings of two seeds are two biLMs kept apart."""
    import dataclasses

    import elmo_core.pretrain
    from encoders.bilm import finetune_key

    encoder, text, key = _finetunable_encoder(tmp_path)
    seeds = []
    real = elmo_core.pretrain.finetune
    monkeypatch.setattr(elmo_core.pretrain, "finetune", lambda *a, **k: seeds.append(k["seed"]) or real(*a, **k))
    zero = encoder.finetuned(text, text, "ner").finetune_report
    two = dataclasses.replace(encoder, finetune_seed=2).finetuned(text, text, "ner").finetune_report
    assert seeds == [0, 2] and (zero["seed"], two["seed"]) == (0, 2)
    compute = f"cpu threads {torch.get_num_threads()}"
    assert two["dir"] == str(tmp_path / "cache" / "finetuned" / finetune_key(encoder.sha256, text, text, 1, 2, compute))
    assert zero["dir"] != two["dir"] and zero["dev_perplexity_after"] != two["dev_perplexity_after"]


def test_a_complete_cache_on_a_read_only_file_system_is_read(bilm_files, tmp_path, monkeypatch):
    """Its lock files cannot be made there: a complete, valid entry is read without a lock; a missing one
    is one line naming the cache."""
    from encoders import activation_cache
    from suite_common.errors import StorageError

    sentences = [["a", "b"], ["c"]]
    built = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2)).get(sentences)

    def read_only(path, wait=True):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(activation_cache, "acquire", read_only)
    before = ActivationCache.encoder_passes
    again = ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2)).get(sentences)
    assert ActivationCache.encoder_passes == before
    np.testing.assert_array_equal(again.sentence(1), built.sentence(1))
    with pytest.raises(StorageError, match="read-only"):
        ActivationCache(tmp_path / "cache", BiLMEncoder(*bilm_files, batch_size=2)).get([["other"]])


def test_a_finetuning_made_on_another_thread_count_is_another_biLM(tmp_path):
    """One thread and two reorder the fine-tuning's float sums (other weights), so a fine-tuning made with
    one thread count is never read back for another: each has its own directory, and the record says
    which computed it."""
    encoder, text, key = _finetunable_encoder(tmp_path)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = encoder.finetuned(text, text, "ner").finetune_report
        torch.set_num_threads(2)
        two = encoder.finetuned(text, text, "ner").finetune_report
    finally:
        torch.set_num_threads(before)
    assert (one["compute"], two["compute"]) == ("cpu threads 1", "cpu threads 2")
    assert one["dir"] != two["dir"]
    kept = sorted(str(p) for p in (tmp_path / "cache" / "finetuned").iterdir() if not p.name.startswith("."))
    assert kept == sorted([one["dir"], two["dir"]])


def test_the_names_of_older_finetunings_are_never_taken_for_one_with_its_compute():
    from encoders.bilm import finetune_compute, finetune_key

    keys = {
        finetune_key("a" * 64, "t", "d", 1, 0, compute) for compute in (None, "cpu threads 1", "cpu threads 2", "cuda")
    }
    assert len(keys) == 4
    assert finetune_compute("cuda:0") == "cuda" and finetune_compute("cpu").startswith("cpu threads ")
