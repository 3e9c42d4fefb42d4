"""Published numbers of Peters et al. (2018), arXiv v2 (NAACL), gathered from each task's own
reference (``tasks/<name>/paper.py``, found through the registry): Table 1 is on the test sets;
Tables 2, 3 and 5-7 on dev. Tasks follow the paper's Table 1 order; a registered task without a
reference (or without a Table 1 row) comes after them, with "—" where the paper's value would stand."""

from __future__ import annotations

from experiments.run_config import task_config_class
from tasks.registry import available, paper_reference, table_tasks, task_class

REFERENCES = {name: ref for name in available() if (ref := paper_reference(name)) is not None}


def is_probe(name: str) -> bool:
    """A layer probe (§5.3: its settings put ELMo at ``probe``): reported per layer, not in the task tables."""
    return task_config_class(name)().elmo_position == "probe"


# the tasks of the task tables, in the paper's Table 1 order: metric and the paper's dataset
TASKS = {
    name: {"metric": task_class(name).metric, "paper_dataset": REFERENCES[name].dataset if name in REFERENCES else "—"}
    for name in table_tasks()
    if not is_probe(name)
}
OUR_DATA = {n: REFERENCES[n].data_here for n in TASKS if n in REFERENCES}
DATA_NOTES = {n: REFERENCES[n].data_note for n in TASKS if n in REFERENCES and REFERENCES[n].data_note}
TABLE1 = {n: REFERENCES[n].table1 for n in TASKS if n in REFERENCES and REFERENCES[n].table1}
TABLE2 = {n: REFERENCES[n].table2 for n in TASKS if n in REFERENCES and REFERENCES[n].table2}
TABLE3 = {n: REFERENCES[n].table3 for n in TASKS if n in REFERENCES and REFERENCES[n].table3}
TABLE7 = {n: REFERENCES[n].table7 for n in TASKS if n in REFERENCES and REFERENCES[n].table7}
PROBES = {n: dict(REFERENCES[n].probe) if n in REFERENCES else {} for n in available() if is_probe(n)}
