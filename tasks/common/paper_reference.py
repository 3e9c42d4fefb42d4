"""What Peters et al. (2018) report for a task, declared in the task's folder (``tasks/<name>/paper.py``,
or a probe function's module, as ``REFERENCE``) so that the report, the paper profile's audit and the
cost model find every task through the registry (``tasks.registry.paper_reference``). Published
numbers as listed in ../shared/reference/elmo_paper_facts.md: Table 1 on the test sets, Tables 2, 3
and 5-7 on dev. A task without a reference is reported with "—" where the paper's value would stand."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PaperReference:
    dataset: str  # the paper's dataset, as Table 1 names it (a probe: its own name)
    data_here: str  # the data the task runs on in this suite, as tables and figures name it
    row: int | None = None  # the task's row in the paper's Table 1 (the report's task order)
    table1: tuple[float, float] | None = None  # test: baseline, ELMo + baseline
    data_note: str | None = None  # where the data here is not the paper's (../shared/README.md)
    table2: dict[str, float] = field(default_factory=dict)  # dev: baseline, last only, all λ=1, all λ=0.001
    table3: dict[str, float] = field(default_factory=dict)  # dev: input only, input and output, output only
    table7: str | None = None  # dev perplexity of the biLM before -> after 1 epoch on the task's text
    probe: dict[str, object] = field(default_factory=dict)  # Tables 5-6: accuracy per biLM layer, and a note
    # the paper profile's audit: (setting, the paper's value, config key or keys, source); "elmo_position"
    # is the position the run resolves (elmo.position=paper)
    settings: tuple[tuple, ...] = ()
    # the paper's training set, for the cost model (benchmarks.paper_scale): its name, and either "local": the
    # copy under ../shared is the full set (counted there), or published counts of examples and distinct texts
    # per text field (with mean token lengths where published) and their "source"; lengths measured locally:
    # "measured" (text field -> [token column, column of the text's identity or None]) and "sentence_lengths_from"
    # (the task whose local training sentences stand in for the paper's sentence lengths)
    training_set: dict[str, object] = field(default_factory=dict)
    # the quick sweeps beside Table 1's (``conf/sweep/<name>.yaml``) that run this task: table2 and table3 where
    # the paper's Tables 2-3 have its row, sample_efficiency for Figure 1, encoders for the BERT comparison
    sweeps: tuple[str, ...] = ()
