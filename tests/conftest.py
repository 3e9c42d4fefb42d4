"""Shared test helpers. Real data lives in ../shared (beside the repository); override with
ELMO_SHARED. Missing shared data fails under CI and skips (with the reason) elsewhere."""

import os
import shutil
import tempfile
from pathlib import Path

# Hugging Face caches go to a directory of this test session, removed at its end: tests leave
# nothing in ~/.cache/huggingface (set before anything imports datasets or transformers).
_HF_HOME = tempfile.mkdtemp(prefix="elmo-tests-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF_HOME, "datasets")

import pytest  # noqa: E402
import torch  # noqa: E402

from elmo_core.bilm import BiLM  # noqa: E402
from elmo_core.options import parse_options  # noqa: E402
from experiments.config_store import register  # noqa: E402

register()  # the typed defaults and the task files' data and profiles, for every test that composes with Hydra


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_HF_HOME, ignore_errors=True)


# The slowest tests (``make test`` prints them: ``--durations``), slowest first. Under pytest-xdist's worksteal
# scheduler (the Makefile's ``--dist worksteal``) each worker is handed one contiguous share of the collection and
# idle workers then take queued tests from busy ones; a test that lasts minutes and starts last leaves the other
# workers idle meanwhile. So these start first, dealt in turn to the workers' shares.
SLOWEST = (
    "tests/test_readme_commands.py::test_every_documented_command_runs[runs and their reports]",
    "tests/test_readme_commands.py::test_every_documented_command_runs[tools]",
    "tests/reporting/test_report.py::test_a_table_directory_keeps_its_options_and_rebuilds_to_the_same_bytes",
    "tests/test_new_task.py::test_the_toy_task_in_the_checkout_passes_every_test_that_goes_through_every_task",
    "tests/test_demo_next_steps.py::test_the_demos_printed_steps_give_table_1s_row",
    "tests/test_readme_commands.py::test_every_documented_command_runs[reports of the committed records]",
    "tests/experiments/test_evaluate_mode.py::test_the_sample_runs_outside_the_checkout_and_its_printed_steps_run_as_printed",
    "tests/tasks/test_ner_columns.py::test_a_new_data_set_trains_from_its_yaml_file_alone_under_its_own_label",
)


def slowest_first(items: list, workers: int) -> list:
    """``items`` reordered so that each worker's share (worksteal's: ``len // workers remaining``) starts with
    its turn of ``SLOWEST``; the other tests keep their order."""
    rank = {name: k for k, name in enumerate(SLOWEST)}
    slow = sorted((i for i in items if i.nodeid in rank), key=lambda i: rank[i.nodeid])
    rest = iter([i for i in items if i.nodeid not in rank])
    out, left = [], len(items)
    for w in range(workers):
        size = left // (workers - w)
        head = slow[w::workers]
        out += head + [i for _, i in zip(range(size - len(head)), rest)]
        left -= size
    out += list(rest)
    return out if len(out) == len(items) else items


@pytest.hookimpl(trylast=True)  # after the deselections of -k and -m: the shares are of what runs
def pytest_collection_modifyitems(config, items):
    """``ELMO_ONLY_TASK=<name>``: each test parametrized by task runs for that task alone (``tests/test_new_task.py``
    runs the ``every_task`` tests so, with a toy task added). Under pytest-xdist, the slowest tests start first."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    if workers > 1:
        items[:] = slowest_first(items, workers)
    only = os.environ.get("ELMO_ONLY_TASK")
    if not only:
        return
    from tasks.registry import available

    def tasks_of(item) -> set:
        params = getattr(getattr(item, "callspec", None), "params", {})
        return {v for v in params.values() if isinstance(v, str) and v in names}

    names = set(available())
    other = [i for i in items if tasks_of(i) - {only}]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [i for i in items if i not in other]


REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ELMO_SHARED", REPO.parent / "shared"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _sample_folders() -> dict[str, Path]:
    """Each task's sample folder, the one its task file names (``sources.sample.dir``): samples have one home."""
    import yaml

    out = {}
    for path in sorted((REPO / "conf" / "task").glob("*.yaml")):
        sample = ((yaml.safe_load(path.read_text()) or {}).get("sources") or {}).get("sample") or {}
        if sample.get("dir"):
            out[path.stem] = REPO / sample["dir"]
    return out


SAMPLES = _sample_folders()


def shared_path(rel: str) -> Path:
    p = SHARED / rel
    if not p.exists():
        msg = f"shared data not found: {p} (set ELMO_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return p


def tiny_options(**overrides) -> dict:
    d = {
        "lstm": {
            "dim": 24,
            "projection_dim": 8,
            "n_layers": 2,
            "cell_clip": 3,
            "proj_clip": 3,
            "use_skip_connections": True,
        },
        "char_cnn": {
            "embedding": {"dim": 4},
            "filters": [[1, 4], [2, 6], [3, 8]],
            "n_highway": 1,
            "n_characters": 262,
            "max_characters_per_token": 50,
            "activation": "relu",
        },
    }
    for k, v in overrides.items():
        block, key = k.split("__")
        d[block][key] = v
    return d


def random_bilm(seed: int = 0, stateful: bool = False, **overrides) -> BiLM:
    torch.manual_seed(seed)
    bilm = BiLM(parse_options(tiny_options(**overrides)), stateful=stateful)
    with torch.no_grad():  # make every parameter non-trivial (biases start at zero)
        for p in bilm.parameters():
            p.add_(0.1 * torch.randn_like(p))
        bilm.token_encoder.char_embed.weight[0].zero_()
    return bilm.eval()


@pytest.fixture
def bilm_tf():
    return shared_path("data/fixtures/bilm_tf")


@pytest.fixture(autouse=True)
def _isolated_runs_root(tmp_path, monkeypatch):
    """Runs made by a test never see (or skip because of) the repository's own outputs."""
    monkeypatch.setenv("ELMO_RUNS_ROOT", str(tmp_path / "runs_root"))
    from experiments import runs_index

    runs_index.forget_walks()  # each test stands for a process of its own: its runs roots walked afresh


@pytest.fixture
def bilm_files(tmp_path):
    """A small random biLM saved in the original format: (options.json, weights.hdf5)."""
    from elmo_core import save_bilm

    save_bilm(random_bilm(), tmp_path / "o.json", tmp_path / "w.hdf5")
    return tmp_path / "o.json", tmp_path / "w.hdf5"


# when task runs began keeping their dev predictions and data hashes: synthetic records dated before it
# stand for the committed records of that era (which the report excuses by their SHA-256 alone)
EVIDENCE_KEPT_SINCE = "2026-11-25T18:00:00+00:00"


@pytest.fixture(autouse=True)
def synthetic_records_stand_for_listed_ones(request, tmp_path_factory, monkeypatch):
    """The report's tests write synthetic records in the layout of the committed records made before runs
    kept their evidence (dated before ``EVIDENCE_KEPT_SINCE``, no predictions). Those committed records are
    excused by the SHA-256 manifest alone; a synthetic one dated in that era, in this session's temporary
    directories, stands for a listed one here. Tests of the manifest itself mark ``real_manifest``."""
    if request.node.get_closest_marker("real_manifest"):
        return
    import datetime

    from reporting import record_evidence

    listed = record_evidence.made_before_evidence
    base = tmp_path_factory.getbasetemp().resolve()
    since = datetime.datetime.fromisoformat(EVIDENCE_KEPT_SINCE)

    def synthetic_or_listed(r):
        if listed(r):
            return True
        date = record_evidence._date(r.date)
        return r.path is not None and base in Path(r.path).resolve().parents and date is not None and date < since

    monkeypatch.setattr(record_evidence, "made_before_evidence", synthetic_or_listed)
