"""WSD probe (§5.3, Table 5): 1-nearest-neighbour sense prediction. Each sense is the average biLM
vector of its training occurrences; a test occurrence takes the sense whose centroid is nearest
(cosine similarity); a lemma never seen in training falls back to the most frequent training sense
of its word (the paper: WordNet's first sense, not available here). Data: the SENSEVAL-2 lexical
sample as shipped by NLTK (``<lexelt item> <instance id> <answer senseid> <context> <wf>...<head>``),
each word's instances split deterministically 80/20 into train/test. The paper used SemCor and the
all-words test sets: the numbers are not directly comparable."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from suite_common.errors import ConfigError
from suite_common.errors import DataError as DataFormatError
from suite_common.typed_config import Text, setting, settings_group

from ..common.config import SenseProbeData
from ..common.paper_reference import PaperReference

# what the paper reports for this probe (Table 5), beside its own numbers in the report
REFERENCE = PaperReference(
    dataset="WSD (SemCor, all-words), Table 5",
    data_here="SENSEVAL-2 lexical sample",
    probe={
        "1": 67.4,
        "2": 69.0,
        "most_frequent_sense": 65.9,
        "note": "paper: SemCor + all-words F1; here: SENSEVAL-2 lexical sample (4 words), 80/20 split, accuracy; "
        "most frequent sense: paper WordNet 1st sense, here the most frequent training sense",
    },
)


@settings_group
class ProbeWsdConfig:
    """The probe's task settings (nothing to size: nearest sense centroid per layer)."""

    DATA: ClassVar[type] = SenseProbeData  # its data group's class

    name: Text = setting("probe_wsd")
    elmo_position: Literal["probe"] = setting("probe")


CONFIG = ProbeWsdConfig  # the settings class of task=probe_wsd


def read_senseval(path: str | Path) -> list[dict]:
    """Instances: ``word`` (lexelt item), ``id``, ``sense`` (first answer), ``tokens``, ``head`` index."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise DataFormatError(f"{path}:{e.position[0]}: not well-formed ({e})") from None
    out = []
    for lexelt in root.iter("lexelt"):
        for inst in lexelt.iter("instance"):
            answers = inst.findall("answer")
            context = inst.find("context")
            if not answers or context is None:
                raise DataFormatError(f"{path}: instance {inst.get('id')} has no answer or context")
            tokens, head = [], None
            for el in context:
                if el.tag == "head":
                    head = len(tokens)
                    tokens += [w.text or "" for w in el.iter("wf")] or [el.text or ""]
                elif el.tag == "wf":
                    tokens.append(el.text or "")
            tokens = [t if t.strip() else "_" for t in tokens]
            if head is None:
                raise DataFormatError(f"{path}: instance {inst.get('id')} has no <head>")
            out.append(
                {
                    "word": lexelt.get("item"),
                    "id": inst.get("id"),
                    "sense": answers[0].get("senseid"),
                    "tokens": tokens,
                    "head": head,
                }
            )
    if not out:
        raise DataFormatError(f"{path}: no instances")
    return out


def split_80_20(instances: list[dict], seed: int = 0) -> tuple[list[dict], list[dict]]:
    by_word = defaultdict(list)
    for inst in instances:
        by_word[inst["word"]].append(inst)
    train, test = [], []
    for word in sorted(by_word):
        items = sorted(by_word[word], key=lambda x: x["id"])
        random.Random(f"{seed}-{word}").shuffle(items)
        cut = int(round(0.8 * len(items)))
        train += items[:cut]
        test += items[cut:]
    return train, test


def most_frequent_senses(train: list[dict]) -> dict[str, str]:
    """Each word's most frequent training sense (the fallback, and the baseline beside the layers)."""
    return {
        w: Counter(i["sense"] for i in train if i["word"] == w).most_common(1)[0][0] for w in {i["word"] for i in train}
    }


def nearest_sense_accuracy(train_vecs, train, test_vecs, test) -> tuple[float, dict]:
    import torch  # here, not at the top: the settings class above is read when any configuration is composed

    centroids = defaultdict(list)
    for v, inst in zip(train_vecs, train):
        centroids[(inst["word"], inst["sense"])].append(v)
    senses = {k: torch.nn.functional.normalize(torch.stack(v).mean(0), dim=0) for k, v in centroids.items()}
    frequent = most_frequent_senses(train)
    correct, per_word = Counter(), Counter()
    for v, inst in zip(test_vecs, test):
        candidates = [(s, c) for (w, s), c in senses.items() if w == inst["word"]]
        if candidates:
            v = torch.nn.functional.normalize(v, dim=0)
            guess = max(candidates, key=lambda sc: float(sc[1] @ v))[0]
        else:
            guess = frequent.get(inst["word"])
        per_word[inst["word"]] += 1
        correct[inst["word"]] += int(guess == inst["sense"])
    return 100 * sum(correct.values()) / len(test), {
        w: round(100 * correct[w] / per_word[w], 2) for w in sorted(per_word)
    }


def run_wsd_probe(cfg, cache, out: dict) -> dict:
    import torch

    if not cfg.data.dir:
        raise ConfigError(f"{cfg.task.name} reads local files: set source=local or data.dir=...")
    d = Path(cfg.data.dir)
    instances = [i for w in cfg.data.words for i in read_senseval(d / f"{w}.pos")]
    train, test = split_80_20(instances, cfg.data.split_seed)
    heads = {}
    for name, part in (("train", train), ("test", test)):
        cached = cache.get([i["tokens"] for i in part], f"probe_wsd/{name}")
        heads[name] = torch.stack(
            [
                torch.from_numpy(np.array(cached.sentence(k)[:, inst["head"]], dtype=np.float32))
                for k, inst in enumerate(part)
            ]
        )  # (N, L+1, D)
    per_layer, per_word = {}, {}
    n_layers = heads["train"].shape[1]
    for layer in [*range(n_layers), "average"]:
        pick = (lambda x: x.mean(1)) if layer == "average" else (lambda x, k=layer: x[:, k])
        per_layer[str(layer)], per_word[str(layer)] = nearest_sense_accuracy(
            pick(heads["train"]), train, pick(heads["test"]), test
        )
    best = max(per_layer, key=per_layer.get)
    frequent = most_frequent_senses(train)
    per_layer["most_frequent_sense"] = 100 * sum(frequent.get(i["word"]) == i["sense"] for i in test) / len(test)
    return {
        **out,
        "dev": {
            "accuracy": per_layer["average"],
            "accuracy_per_layer": per_layer,
            "accuracy_per_word": per_word,
            "best_layer": best,
        },
        "metric": "accuracy",
        "data_stats": {
            "train_instances": len(train),
            "test_instances": len(test),
            "senses": len({(i["word"], i["sense"]) for i in instances}),
        },
    }
