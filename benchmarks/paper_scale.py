"""What ``profile=paper`` costs at the paper's full scale (Peters et al. 2018 §4 and appendix A), measured
on this machine and projected to the paper's datasets.

    python -m benchmarks.paper_scale [--options F --weights F] [--tasks T1,T2,...]
                                     [--sample-tokens 3000] [--updates 4] [--threads 1] [--out outputs/paper_scale.md]

With no ``--options/--weights`` it builds a biLM of the original size (2 x 4096 cells, 512
projection, 2,048 character filters, 2 highway layers) with random weights, writes it in the original
format and loads it back through the suite's own loader; with them, it uses those files (the official
ones, for instance). Speed does not depend on the weights' values.

For each task, on a sample of the task's local data composed at ``profile=paper`` (``source=local``),
it measures:

* the biLM's tokens/s while filling a real activation cache of the sample (``ActivationCache.get``),
  and the cache's bytes per token in float32 and float16, from the files written; the size the run
  would plan (``ActivationCache.planned_bytes``) is compared with the bytes written;
* seconds per training update of the task model at the paper's settings (the paper's head sizes,
  optimizer and batch size), with ELMo at the paper's position read from that cache, and without
  ELMo: the mean of ``--updates`` updates after one warm-up update, on the sample's batches;
* where ``profile=paper`` fine-tunes the biLM on the task's text first (``encoder.finetune``: SQuAD,
  SNLI; §3.4, A.1), the tokens/s of that fine-tuning's training update at the biLM's size, as
  ``elmo_core.pretrain.finetune`` makes it (its rows, unroll, dropout, Adagrad and clipping; the fast
  step), with a softmax over the shipped vocabulary, on the sample's text;
* the process's peak resident memory while doing so.

It then projects, for the paper's full training sets (sizes in each task's reference,
``tasks/<name>/paper.py``, with their sources):
the cache size on disk (each distinct text once, as the runs store it), the biLM hours to fill it,
the hours of the fine-tuning pass over those texts (``encoder.finetune_epochs`` passes), and the
hours per epoch and to the paper's epoch count (``trainer.max_epochs``: an upper bound, early
stopping may end sooner) on this CPU. Dev evaluation is not included. A projection multiplies
rates measured on the local stand-in data (SICK for SNLI, Universal PropBank for CoNLL-2012 SRL,
LitBank for OntoNotes coreference) by published counts; the table says which numbers are measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks import SHARED
from benchmarks.bilm_speed import PAPER_OPTIONS, peak_rss_mb, reset_peak_rss
from benchmarks.paper_scale_report import projection, report
from benchmarks.pretrain_speed import SHIPPED_VOCAB
from elmo_core import BiLM, save_bilm
from elmo_core.options import parse_options
from elmo_core.pretrain import build_parser, make_training_step
from elmo_core.pretraining.lm_data import SentenceStream, Vocabulary
from elmo_core.pretraining.lm_training import LanguageModel, detach_state, lm_optimizer
from encoders.activation_cache import ActivationCache
from experiments import paper_numbers
from experiments.config_store import compose
from experiments.pipeline import build_run
from experiments.plan import RunPlan
from experiments.run_config import as_run
from experiments.trainer import make_optimizer, on_device, train_step
from tasks.base import TaskSplit

# the tasks whose reference gives the paper's training set (tasks/<name>/paper.py: training_set), in Table 1's order
TASKS = tuple(
    t for t in paper_numbers.TASKS if paper_numbers.REFERENCES.get(t) and paper_numbers.REFERENCES[t].training_set
)


def local_sentences(task_name: str) -> list[list[str]]:
    """The sentences of a task's local training file: the stand-in for a paper training set's sentence
    lengths (``training_set["sentence_lengths_from"]``; Universal PropBank's for CoNLL-2012's, SRL and
    coreference alike)."""
    cfg = compose([f"task={task_name}", "source=local"])
    built = build_run(RunPlan.resolve(as_run(cfg)), layers=False, finetune=False)
    return built.task.sentences(built.splits["train"])


def paper_bilm(directory: Path) -> tuple[Path, Path]:
    """A biLM of the original size with random weights, in the original format."""
    torch.manual_seed(0)
    bilm = BiLM(parse_options(PAPER_OPTIONS))
    with torch.no_grad():
        for p in bilm.parameters():
            p.normal_(0, 0.02)
    save_bilm(bilm, directory / "options.json", directory / "weights.hdf5")
    return directory / "options.json", directory / "weights.hdf5"


def compose_paper(
    task: str, options: Path, weights: Path, cache_dir: Path, threads: int, position: str, device: str = "cpu"
):
    overrides = [
        f"task={task}",
        "profile=paper",
        "source=local",
        f"encoder.options={options}",
        f"encoder.weights={weights}",
        f"cache.dir={cache_dir}",
        f"threads={threads}",
        f"elmo.position={position}",
        f"device={device}",
    ]
    return compose(overrides)


def sample_size(task, full, batch_size: int, tokens: int) -> int:
    """The first examples whose texts reach ``tokens`` tokens, and at least one full batch."""
    lengths = [len(s) for s in task.sentences(full)]
    if len(lengths) == len(full):  # one text per example
        k = int(np.searchsorted(np.cumsum(lengths), tokens)) + 1
    else:  # shared texts (QA contexts, NLI sentences, SRL and coreference rows): grow until enough
        k = 1
        while k < len(full) and sum(map(len, task.sentences(task.prepare(full.select(range(k)), "train")))) < tokens:
            k = min(len(full), k * 2)
    first = task.batches(full.select(range(min(len(full), 4 * batch_size))), batch_size, shuffle=False)[0]
    return min(len(full), max(k, len(first)))


def examples_per_update(task, full, batch_size: int) -> float:
    """Training examples per update as the task batches them (QA also caps padded tokens; coreference
    takes one document per update)."""
    return len(full) / len(task.batches(full, batch_size, shuffle=False))


def seconds_per_update(built, train, updates: int) -> float:
    """Mean wall time of ``updates`` training updates (after one warm-up update) of a run's model, built by its
    plan (``RunPlan.build``), as the trainer does them."""
    task, config, device = built.task, built.trainer, built.device
    model = built.model.to(device)
    optimizer = make_optimizer(model, config)
    params = [p for p in model.parameters() if p.requires_grad]
    batches = task.batches(train.examples, config.batch_size, shuffle=True, rng=random.Random(0))
    batches = (batches * (updates + 1))[: updates + 1]
    model.train()
    times = []
    for idx in batches:
        start = time.perf_counter()
        train_step(model, on_device(task.make_batch(train, idx), device), optimizer, config, params)
        if device.startswith("cuda"):
            torch.cuda.synchronize()  # the update's kernels finished, not only queued
        times.append(time.perf_counter() - start)
    return float(np.mean(times[1:]))


def finetune_rate(options: Path, sentences: list[list[str]], updates: int, device: str) -> dict:
    """Tokens/s of the biLM fine-tuning pass's training update (``elmo_core.pretrain.finetune`` with its
    defaults) for the biLM of ``options``, over ``sentences`` repeated until ``updates`` + 1 updates are
    full; the first update is warm-up. The softmax is over the shipped vocabulary (``SHIPPED_VOCAB``): an
    exported model's own may be larger (the original's 793,471 words), which costs more per token."""
    defaults = build_parser().parse_args(["--train", "-", "--out", "-"])
    vocab = Vocabulary.load(SHIPPED_VOCAB)
    torch.manual_seed(0)
    lm = LanguageModel(BiLM(parse_options(json.loads(Path(options).read_text()))), len(vocab), dropout=defaults.dropout)
    lm.to(device).train()
    optimizer = lm_optimizer(lm, defaults.lr, device)
    step = make_training_step(lm, defaults.train_step, 1)
    rows, unroll = defaults.batch_size, defaults.unroll_steps
    tokens_needed = (updates + 1) * rows * unroll
    text = sentences * (tokens_needed // max(1, sum(map(len, sentences))) + 2)
    batches = iter(SentenceStream(text, vocab, rows, unroll).batches(0))
    state = lm.bilm.zero_state(rows, device)
    seconds, tokens = 0.0, 0
    for i in range(updates + 1):
        batch = next(batches)
        count = int((batch.forward_targets >= 0).sum())
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        _, state = step(batch, state, unroll / (2 * count), slice(None), device)
        torch.nn.utils.clip_grad_norm_(lm.parameters(), defaults.clip_norm)
        optimizer.step()
        state = detach_state(state)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if i > 0:
            seconds += time.perf_counter() - start
            tokens += count
    return {"tokens_per_s": tokens / seconds, "rows": rows, "unroll_steps": unroll, "vocabulary": len(vocab)}


def measure(
    task_name: str,
    options: Path,
    weights: Path,
    work: Path,
    sample_tokens: int,
    updates: int,
    threads: int,
    device: str = "cpu",
) -> dict:
    plan = RunPlan.resolve(as_run(compose_paper(task_name, options, weights, work / "cache", threads, "paper", device)))
    built = build_run(plan, layers=False, finetune=False)  # the full vocabulary: the embeddings have their real size
    cfg, source, task, full = plan.run, built.encoder, built.task, built.splits["train"]
    part = task.prepare(
        full.select(range(sample_size(task, full, int(cfg.trainer.batch_size), sample_tokens))), "train"
    )
    sentences = task.sentences(part)
    tokens = sum(map(len, sentences))
    reset_peak_rss()
    out = {
        "task": task_name,
        "examples_local": len(full),
        "sample_examples": len(part),
        "sample_texts": len(sentences),
        "sample_tokens": tokens,
        "batch_size": int(cfg.trainer.batch_size),
        "max_epochs": int(cfg.trainer.max_epochs),
        "position": plan.run.position,
        "examples_per_update": examples_per_update(task, full, int(cfg.trainer.batch_size)),
    }
    sizes = {}
    _ = source.model  # loaded before the clock starts: the rate is the biLM's, not the file reader's
    for dtype in ("float32", "float16"):
        cache = ActivationCache(source.cache_config.dir, source, dtype=dtype)
        planned = cache.planned_bytes(sentences)
        start = time.perf_counter()
        entry = cache.get(sentences, f"{task_name}/sample")
        seconds = time.perf_counter() - start
        written = sum((entry.directory / f).stat().st_size for f in ("layers.npy", "offsets.npy"))
        sizes[dtype] = {"planned": planned, "written": written, "seconds": seconds}
    out["bilm_tokens_per_s"] = tokens / min(s["seconds"] for s in sizes.values())
    out["cache_bytes_per_token"] = {d: s["written"] / tokens for d, s in sizes.items()}
    out["cache_planned_over_written"] = {d: s["planned"] / s["written"] for d, s in sizes.items()}
    train = TaskSplit("train", part, source.layer_source(sentences, f"{task_name}/sample"))
    out["s_per_update_elmo"] = seconds_per_update(built, train, updates)
    base = RunPlan.resolve(as_run(compose_paper(task_name, options, weights, work / "cache", threads, "none", device)))
    out["s_per_update_baseline"] = seconds_per_update(
        build_run(base, layers=False, finetune=False, splits=built.splits),  # elmo.position alone differs: same data
        TaskSplit("train", part),
        updates,
    )
    if cfg.encoder.finetune:
        out["finetune"] = {
            **finetune_rate(options, sentences, updates, device),
            "epochs": int(cfg.encoder.finetune_epochs),
        }
    out["peak_rss_mb"] = peak_rss_mb()
    out["full"] = full_scale(task_name, task, full, part)
    return out


def full_scale(task_name: str, task, full, part) -> dict:
    """Distinct texts, their tokens and training examples of the paper's full training set."""
    spec = paper_numbers.REFERENCES[task_name].training_set
    if spec.get("local"):
        sentences = task.sentences(full)
        return {
            "name": spec["name"],
            "examples": len(full),
            "texts": len(sentences),
            "tokens": sum(map(len, sentences)),
            "source": "counted on the local copy (the full training set)",
        }
    lengths = dict(spec.get("lengths", {}))
    for kind, (column, key) in spec.get("measured", {}).items():  # mean tokens of a column, one per distinct key
        texts = dict(zip(part[key], part[column])) if key else dict(enumerate(part[column]))
        lengths.setdefault(kind, float(np.mean([len(t) for t in texts.values()])))
    if spec.get("sentence_lengths_from"):
        lengths["sentence"] = float(np.mean([len(s) for s in local_sentences(spec["sentence_lengths_from"])]))
    tokens = sum(n * lengths[kind] for kind, n in spec["texts"].items())
    examples = spec.get("examples")
    if examples is None:  # SRL: one example per predicate, at the local rate per sentence
        examples = round(spec["texts"]["sentence"] * len(full) / len(task.sentences(full)))
    return {
        "name": spec["name"],
        "examples": int(examples),
        "texts": int(sum(spec["texts"].values())),
        "tokens": int(tokens),
        "source": spec["source"],
        "lengths": lengths,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--options", type=Path, help="biLM options.json (default: a random biLM of the original size)")
    ap.add_argument("--weights", type=Path, help="biLM weights.hdf5 (with --options)")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated tasks")
    ap.add_argument(
        "--sample-tokens",
        type=int,
        default=3000,
        help="the sample: a task's first training examples whose texts reach this many tokens "
        "(and at least one full batch)",
    )
    ap.add_argument("--updates", type=int, default=4, help="timed training updates per arm (after one warm-up)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the paper runs here use 1 each)")
    ap.add_argument(
        "--device",
        default="cpu",
        help="cpu, cuda or cuda:N: where the biLM and the task models run (the hours are then this device's)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("outputs/paper_scale.md"),
        help="the Markdown report (default outputs/paper_scale.md; the committed one is results/paper_scale.md)",
    )
    args = ap.parse_args(argv)
    args.argv = list(argv) if argv is not None else __import__("sys").argv[1:]
    if bool(args.options) != bool(args.weights):
        ap.error("give both --options and --weights, or neither")
    torch.set_num_threads(args.threads)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results = []
    with tempfile.TemporaryDirectory(prefix="paper_scale_") as tmp:
        work = Path(tmp)
        if args.options:
            options, weights, bilm = args.options, args.weights, f"{args.options} + {args.weights}"
        else:
            options, weights = paper_bilm(work)
            bilm = (
                "original size (2 x 4096 cells, 512 projection, 2,048 filters), "
                "random weights written in the original format"
            )
        for name in args.tasks.split(","):
            print(f"== {name}", flush=True)
            m = measure(name, options, weights, work, args.sample_tokens, args.updates, args.threads, args.device)
            print(json.dumps({**m, "projection": projection(m)}, default=float), flush=True)
            results.append(m)
    text = report(results, args, bilm, started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    (args.out.with_suffix(".json")).write_text(
        json.dumps(
            {
                "date": started,
                "argv": args.argv,
                "threads": args.threads,
                "shared": str(SHARED),
                "results": [{**m, "projection": projection(m)} for m in results],
            },
            indent=1,
            default=float,
        )
        + "\n"
    )
    print(text)


if __name__ == "__main__":
    main()
