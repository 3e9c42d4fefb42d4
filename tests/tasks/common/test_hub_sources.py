"""The default source (``source=hf``) offline: each task's hub copy is rebuilt locally in the hub's
schema (column names, nested fields, ClassLabel names) from the test fixtures, laid out as the
configured Parquet export (``<data_dir>/<split>/0000.parquet``), loaded through the same
``load_dataset`` call, and trained on. Without network, the default command fails within seconds
with one line naming ``source=local``."""

import json
import subprocess
import sys
import time

import datasets
import pytest
from conftest import FIXTURES, REPO
from hydra import compose, initialize_config_dir
from task_setups import tiny_sizes

from experiments import runner
from experiments.run_config import as_run
from tasks.coref.reader import read_conll2012_coref
from tasks.ner.reader import read_conll2003_file
from tasks.nli.reader import read_sick_tsv
from tasks.srl.reader import read_conllu_propbank_file

V = datasets.Value
SEQ = datasets.Sequence
NER_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def _ner():
    ds, _ = read_conll2003_file(FIXTURES / "ner_tiny.conll")
    feats = datasets.Features(
        {
            "id": V("string"),
            "tokens": SEQ(V("string")),
            "pos_tags": SEQ(datasets.ClassLabel(names=["NN", "NNP"])),
            "chunk_tags": SEQ(datasets.ClassLabel(names=["O", "B-NP"])),
            "ner_tags": SEQ(datasets.ClassLabel(names=NER_NAMES)),
        }
    )
    rows = {
        "id": [str(i) for i in range(len(ds))],
        "tokens": ds["tokens"],
        "pos_tags": [[0] * len(t) for t in ds["tokens"]],
        "chunk_tags": [[0] * len(t) for t in ds["tokens"]],
        "ner_tags": [[NER_NAMES.index(t) for t in tags] for tags in ds["tags"]],
    }
    return datasets.Dataset.from_dict(rows, features=feats)


def _sst():
    return datasets.Dataset.from_dict(
        {"ptb_tree": (FIXTURES / "sst_tiny.txt").read_text().splitlines()},
        features=datasets.Features({"ptb_tree": V("string")}),
    )


def _squad():
    data = json.loads((FIXTURES / "squad_tiny.json").read_text())
    rows = [
        {
            "id": q["id"],
            "title": a["title"],
            "context": p["context"],
            "question": q["question"],
            "answers": {
                "text": [x["text"] for x in q["answers"]],
                "answer_start": [x["answer_start"] for x in q["answers"]],
            },
        }
        for a in data["data"]
        for p in a["paragraphs"]
        for q in p["qas"]
    ]
    feats = datasets.Features(
        {
            "id": V("string"),
            "title": V("string"),
            "context": V("string"),
            "question": V("string"),
            "answers": {"text": SEQ(V("string")), "answer_start": SEQ(V("int32"))},
        }
    )
    return datasets.Dataset.from_list(rows, features=feats)


def _snli():
    ds, _ = read_sick_tsv(FIXTURES / "sick_tiny.tsv")
    names = ["entailment", "neutral", "contradiction"]
    rows = {
        "premise": [" ".join(p) for p in ds["premise"]],
        "hypothesis": [" ".join(h) for h in ds["hypothesis"]],
        "label": list(ds["label"]),
    }  # the reader's label ids follow the hub's names
    assert names == __import__("tasks.nli.reader", fromlist=["LABELS"]).LABELS
    rows = {k: v + ([v[0]] if k != "label" else [-1]) for k, v in rows.items()}  # one pair without a gold label
    return datasets.Dataset.from_dict(
        rows,
        features=datasets.Features(
            {"premise": V("string"), "hypothesis": V("string"), "label": datasets.ClassLabel(names=names)}
        ),
    )


ONTONOTES = datasets.Features(
    {
        "document_id": V("string"),
        "sentences": [
            {
                "part_id": V("int32"),
                "words": SEQ(V("string")),
                "pos_tags": SEQ(V("int32")),
                "parse_tree": V("string"),
                "predicate_lemmas": SEQ(V("string")),
                "predicate_framenet_ids": SEQ(V("string")),
                "word_senses": SEQ(V("float32")),
                "speaker": V("string"),
                "named_entities": SEQ(V("int32")),
                "srl_frames": [{"verb": V("string"), "frames": SEQ(V("string"))}],
                "coref_spans": SEQ(SEQ(V("int32"))),
            }
        ],
    }
)


def _sentence(words, frames=(), spans=()):
    n = len(words)
    return {
        "part_id": 0,
        "words": words,
        "pos_tags": [0] * n,
        "parse_tree": "",
        "predicate_lemmas": [""] * n,
        "predicate_framenet_ids": [""] * n,
        "word_senses": [0.0] * n,
        "speaker": "",
        "named_entities": [0] * n,
        "srl_frames": [{"verb": words[f.index("B-V")], "frames": f} for f in frames],
        "coref_spans": list(spans),
    }


def _ontonotes_srl():
    ds, _ = read_conllu_propbank_file(FIXTURES / "srl_tiny.conllu")
    sentences = {}
    for row in ds:
        sentences.setdefault(row["sentence"], (row["tokens"], []))[1].append(row["tags"])
    return datasets.Dataset.from_list(
        [{"document_id": f"nw/tiny/{i}", "sentences": [_sentence(w, f)]} for i, (w, f) in sentences.items()],
        features=ONTONOTES,
    )


def _ontonotes_coref():
    ds, _ = read_conll2012_coref(FIXTURES / "coref_tiny.conll")
    docs = []
    for doc in ds:
        sentences, offset = [], 0
        for words in doc["sentences"]:
            spans = [
                [c, s - offset, e - offset]
                for c, cluster in enumerate(doc["clusters"])
                for s, e in cluster
                if offset <= s and e < offset + len(words)
            ]
            sentences.append(_sentence(words, spans=spans))
            offset += len(words)
        docs.append({"document_id": doc["doc_key"], "sentences": sentences})
    return datasets.Dataset.from_list(docs, features=ONTONOTES)


HUB = {"ner": _ner, "sst": _sst, "qa": _squad, "nli": _snli, "srl": _ontonotes_srl, "coref": _ontonotes_coref}


@pytest.mark.parametrize("task", sorted(HUB))
def test_the_hub_copy_loads_and_trains_offline(task, bilm_files, tmp_path):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        default = compose("config", overrides=[f"task={task}"])
    assert default.data.get("dir") is None  # source=hf is the default
    local = tmp_path / "hub_copy"
    folder = local / default.data.hf_data_dir if default.data.get("hf_data_dir") else local / "data"
    for split in ("train", "validation"):
        (folder / split).mkdir(parents=True)
        HUB[task]().to_parquet(str(folder / split / "0000.parquet"))
    o, w = bilm_files
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                f"task={task}",
                f"data.hf_name={local}",
                f"encoder.options={o}",
                f"encoder.weights={w}",
                f"cache.dir={tmp_path / 'cache'}",
                "elmo.position=input",
                "trainer.max_epochs=1",
                "data.fraction=1.0",  # all of the few examples (the quick profile keeps 10 % of SQuAD's)
                *tiny_sizes(task),
            ],
        )
    record = runner.train(as_run(cfg), tmp_path / "run")
    assert record["train_examples"] > 0 and record["dev"][record["metric"]] >= 0
    if task == "nli":
        assert record["data_stats"]["train"]["no_gold_label_dropped"] == 1


def test_offline_default_source_fails_fast_with_one_line(tmp_path):
    env = {
        **__import__("os").environ,
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "0",
    }
    env.pop("ELMO_SHARED", None)  # no local copies either (../shared is not beside tmp_path)
    started = time.time()  # what start-up alone costs on this machine now (other tests may share its cores)
    subprocess.run([sys.executable, "-c", "import datasets, hydra, torch"], capture_output=True, timeout=120)
    startup = time.time() - started
    started = time.time()
    done = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "task=ner", f"runs_root={tmp_path / 'runs'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    seconds = time.time() - started
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "source=local" in lines[0] and "eriktks/conll2003" in lines[0], done.stderr
    assert seconds < max(15, 4 * startup), (seconds, startup)  # the hub's retries are not waited for
    assert not (tmp_path / "runs" / "ner").exists()
