"""Tasks and probes are found by the suite's layout: a task's folder and its conf files
are all that adding one touches."""

import pytest
from conftest import REPO

from suite_common.errors import ConfigError
from tasks.registry import available, is_probe_function, probe_function, task_class


@pytest.mark.every_task
def test_every_task_folder_and_probe_is_found_and_each_has_its_conf():
    names = available()
    folders = sorted(p.parent.name for p in (REPO / "tasks").glob("*/task.py"))
    probes = sorted(f"probe_{p.stem}" for p in (REPO / "tasks" / "probes").glob("*.py") if p.stem != "__init__")
    assert names == folders + probes and {"ner", "coref", "probe_wsd"} <= set(names)
    for name in names:
        assert (REPO / "conf" / "task" / f"{name}.yaml").is_file(), name
        if is_probe_function(name):  # a probe with nothing to train (WSD: 1-NN on sense centroids)
            assert callable(probe_function(name))
        else:
            assert task_class(name).__module__ == f"tasks.{name}.task"


@pytest.mark.parametrize("name", ["nre", "probe_xyz", "base", "probes"])
def test_an_unknown_name_is_one_error_listing_what_there_is(name):
    with pytest.raises(ConfigError, match=rf"unknown task '{name}' \(available: coref, ner, nli, .*probe_wsd\)"):
        task_class(name) if not name.startswith("probe_") else probe_function(name)


def test_asking_a_probe_function_for_its_task_class_says_what_it_is():
    with pytest.raises(ConfigError, match=r"'probe_wsd' is a probe with nothing to train \(tasks/probes/wsd.py\)"):
        task_class("probe_wsd")


@pytest.mark.every_task
def test_every_trainable_task_has_tiny_data_for_the_tests_of_every_task():
    """A task file's ``sources.sample`` (a few examples in the checkout, with ``profiles.tiny``'s sizes) is
    what the model, meta-device and Transformer tests run it on."""
    from task_setups import TASKS, TRAINABLE

    assert TRAINABLE and [name for name in TRAINABLE if name not in TASKS] == [], (
        "give conf/task/<name>.yaml a sources.sample"
    )
