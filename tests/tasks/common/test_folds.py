"""Cross-validation folds (``data.folds``, ``data.fold``): every unit is held out exactly once over the folds,
never on both sides of one, the same in every run; the settings are checked together; a fold's run trains its
fixed number of epochs and keeps the last (``trainer.keep=last``), making no choice on the held-out fold."""

import datasets
import pytest
from run_configs import compose_cfg, tiny_ner_cfg

from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import ConfigError
from tasks.common.folds import fold_splits


def _pool(documents: int, parts: int = 2):
    rows = [{"doc": f"d{i}", "part": p} for i in range(documents) for p in range(parts)]
    return datasets.Dataset.from_list(rows[: len(rows) * 4 // 5]), datasets.Dataset.from_list(
        rows[len(rows) * 4 // 5 :]
    )


@pytest.mark.parametrize("documents,folds", [(90, 9), (23, 5)])
def test_each_unit_is_held_out_once_whole_and_the_same_in_every_run(documents, folds):
    train, dev = _pool(documents)
    held = []
    for fold in range(folds):
        split = fold_splits({"train": train, "dev": dev, "test": dev}, folds, fold, unit="doc")
        again = fold_splits({"train": train, "dev": dev}, folds, fold, unit="doc")
        assert split["dev"].to_list() == again["dev"].to_list() and split["test"] is dev
        inside, outside = set(split["dev"]["doc"]), set(split["train"]["doc"])
        assert not inside & outside and len(inside | outside) == documents  # a document's parts stay together
        assert len(split["dev"]) + len(split["train"]) == 2 * documents
        assert len(inside) in (documents // folds, -(-documents // folds))  # sizes differ by at most one
        order = [(r["doc"], r["part"]) for r in split["train"]]
        assert order == sorted(order, key=lambda key: (int(key[0][1:]), key[1]))  # the pool's own order
        held += sorted(inside)
    assert sorted(held) == sorted(f"d{i}" for i in range(documents))


def test_rows_are_the_units_when_a_task_names_none():
    train, dev = _pool(10, parts=1)
    sizes = [len(fold_splits({"train": train, "dev": dev}, 3, k)["dev"]) for k in range(3)]
    assert sorted(sizes) == [3, 3, 4]


@pytest.mark.parametrize(
    "overrides,message",
    [
        (["++data.folds=9"], r"^data: data.folds and data.fold are given together"),
        (["++data.folds=9", "++data.fold=9"], r"^data: data.fold=9: must be from 0 to 8 with data.folds=9"),
        (["++data.folds=1", "++data.fold=0"], r"^data.folds=1: must be greater than or equal to 2"),
        (["++trainer.keep=last", "trainer.lr_halving=true"], r"^trainer: trainer.keep=last makes no choice on dev"),
    ],
)
def test_fold_settings_are_checked_together_in_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message) as caught:
        as_run(compose_cfg(["task=coref", *overrides]))
    assert "\n" not in str(caught.value)


def test_too_few_units_for_the_folds_is_refused():
    train, dev = _pool(3, parts=1)
    with pytest.raises(ConfigError, match=r"data.folds=5: the pooled train and dev splits hold only 3 units"):
        fold_splits({"train": train, "dev": dev}, 5, 0)


def test_keep_last_trains_every_epoch_and_keeps_the_last(bilm_files, tmp_path):
    """With patience 1 a run may stop early on dev; with ``trainer.keep=last`` it runs all its epochs and its
    record's dev metric is the last epoch's."""
    overrides = (
        "elmo.position=none",
        "trainer.max_epochs=3",
        "trainer.min_updates=0",
        "trainer.patience=1",
        "++trainer.keep=last",
    )
    out = tmp_path / "runs" / "ner" / "run"
    out.mkdir(parents=True)
    result = runner.train(as_run(tiny_ner_cfg(bilm_files, tmp_path, *overrides)), out)
    assert [e["epoch"] for e in result["epochs"]] == [1, 2, 3] and result["best_epoch"] == 3
    assert round(result["dev"]["f1"], 4) == result["epochs"][-1]["dev_f1"]


def test_a_sweep_configs_own_axes_are_checked_with_the_command_line():
    """``python run.py -m +sweep=cross_validation task=coref ...`` (the command its file documents): the folds come
    from the sweep file's ``hydra.sweeper.params``, so the check composes each job with them; a key given on the
    command line replaces the sweep file's axis, and without ``-m`` the sweep file's folds alone are refused."""
    from experiments.command_line import check_overrides, read, sweeper_axes

    check_overrides(read(["-m", "+sweep=cross_validation", "task=coref", "profile=quick", "source=local"]))
    axes = sweeper_axes([["+sweep=cross_validation"], ["task=coref"], ["+ablation=elmo"]])
    assert axes == [[f"data.fold={k}" for k in range(9)]]
    with pytest.raises(ConfigError, match=r"data.fold=9: must be from 0 to 8 .*\(sweep job ablation=baseline\)"):
        check_overrides(
            read(["-m", "+sweep=cross_validation", "task=coref", "profile=quick", "source=local", "data.fold=9"])
        )
    with pytest.raises(ConfigError, match=r"^data: data.folds and data.fold are given together"):
        check_overrides(read(["+sweep=cross_validation", "task=coref", "profile=quick", "source=local"]))
