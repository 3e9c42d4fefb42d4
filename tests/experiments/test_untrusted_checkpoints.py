"""A received ``.pt`` file never runs code: every place the suite loads one (task checkpoints for
``mode=evaluate`` and the report, training states, biLM and BERT pretraining checkpoints) is given a
file whose pickle would create a marker file when unpickled; each must refuse it with one error
line and leave no marker."""

import pickle
import random
import re
from pathlib import Path

import pytest
import torch
from conftest import REPO, SAMPLES
from run_configs import compose_cfg

from experiments import trained_runs
from experiments.run_config import as_run
from suite_common.errors import SuiteError


class Payload:
    """Unpickling this calls ``open(marker, "w")``: the marker's existence proves code ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


def plant(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"format": "anything", "config": {}, "payload": Payload(marker)}, path)
    return path


def test_the_payload_runs_code_when_unpickled(tmp_path):
    """The planted file is a real attack: unpickling its ``data.pkl`` (what a full ``torch.load`` does)
    creates the marker."""
    import zipfile

    marker = tmp_path / "marker"
    with zipfile.ZipFile(plant(tmp_path / "x.pt", marker)) as archive:
        pickle.loads(archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl"))))
    assert marker.exists()


def test_evaluate_refuses_a_planted_best_pt(tmp_path):

    marker = tmp_path / "marker"
    plant(tmp_path / "run" / "best.pt", marker)
    cfg = compose_cfg(
        ["mode=evaluate", f"checkpoint={tmp_path / 'run'}", f"data.test_path={SAMPLES['ner'] / 'ner_tiny.conll'}"]
    )
    with pytest.raises(SuiteError, match="best.pt"):
        trained_runs.evaluate(as_run(cfg), tmp_path / "run")
    assert not marker.exists()


def test_a_planted_training_state_is_refused(tmp_path):
    from experiments import train_state

    marker = tmp_path / "marker"
    path = plant(tmp_path / "train_state.pt", marker)
    model = torch.nn.Linear(2, 2)
    with pytest.raises(SuiteError, match="not a training state") as refused:
        train_state.load(
            path,
            run="x",
            model=model,
            optimizer=torch.optim.Adam(model.parameters()),
            schedule=None,
            average=None,
            history=[],
            batch_order=random.Random(0),
        )
    assert not marker.exists() and path.exists()  # refused, and the file is left as it is
    assert "\n" not in str(refused.value)  # in one line


def test_a_planted_bilm_pretraining_checkpoint_is_refused(tmp_path):
    from elmo_core.pretraining.lm_checkpoint import load_checkpoint

    marker = tmp_path / "marker"
    path = plant(tmp_path / "checkpoint.pt", marker)
    with pytest.raises(SuiteError, match="checkpoint"):
        load_checkpoint(path, {}, None, None, 0, 1, "cpu")
    assert not marker.exists()


def test_a_planted_bert_checkpoint_is_refused_before_anything_runs(tmp_path):
    from tiny_models import tiny_args

    from bert_core.bert_pretrain import build_parser, train

    marker = tmp_path / "marker"
    plant(tmp_path / "bert" / "checkpoint.pt", marker)
    with pytest.raises(SuiteError, match="unreadable checkpoint"):
        train(build_parser().parse_args(tiny_args(tmp_path, "bert")))
    assert not marker.exists()


def test_the_report_tool_refuses_a_planted_best_pt(tmp_path):
    from reporting.elmo_input_norms import input_norms

    marker = tmp_path / "marker"
    plant(tmp_path / "run" / "best.pt", marker)
    with pytest.raises(SuiteError, match=r"best.pt: not a checkpoint of tensors and plain data") as refused:
        input_norms(tmp_path / "run")  # torch.load(weights_only=True) refuses the payload: one line
    assert not marker.exists() and "\n" not in str(refused.value)


def test_no_torch_load_in_the_suite_unpickles_objects():
    """Every ``torch.load`` in the packages passes ``weights_only=True`` (a new call site must too)."""
    calls = []
    for path in REPO.glob("*/**/*.py"):
        if path.parts[len(REPO.parts)].startswith(".venv") or path.parts[len(REPO.parts)] == "tests":
            continue
        text = path.read_text()
        for match in re.finditer(r"torch\.load\(([^()]|\([^()]*\))*\)", text):
            calls.append((path.relative_to(REPO), match.group(0)))
    assert len(calls) >= 5
    unsafe = [(str(p), c) for p, c in calls if "weights_only=True" not in c]
    assert not unsafe
