"""``make demo``'s printed next steps, run as printed, give the Table 1 row the README promises: the
demo's ELMo number, the baseline beside it, the gain and its interval (on tiny data, with a user's
own biLM files, from the Makefile's own demo command)."""

import re
import shlex
import subprocess
import sys

from conftest import REPO, SAMPLES
from report_records import with_bilm, write_record


def _demo_command() -> list[str]:
    """The Makefile's demo recipe, with its interpreter and ARGS filled in by the test."""
    lines = (REPO / "Makefile").read_text().splitlines()
    recipe = lines[lines.index(next(x for x in lines if x.startswith("demo:"))) + 1].strip()
    words = shlex.split(recipe)
    assert words[:2] == ["$(PY)", "run.py"] and words[-1] == "$(ARGS)", recipe
    return words[1:-1]


def test_the_demos_printed_steps_give_table_1s_row(bilm_files, tmp_path):
    o, w = bilm_files
    runs = tmp_path / "runs"
    tiny = [f"data.dir={SAMPLES['ner']}", "data.train_file=ner_tiny.conll", "data.dev_file=ner_tiny.conll",
            f"encoder.options={o}", f"encoder.weights={w}", f"cache.dir={tmp_path / 'cache'}", f"runs_root={runs}",
            "trainer.max_epochs=2", "trainer.min_updates=0", "task.model.hidden=[8]", "task.model.char_filters=4",
            "task.model.word_dim=8", "threads=1"]  # fmt: skip
    demo = subprocess.run([sys.executable, *_demo_command(), *tiny], capture_output=True, text=True, cwd=REPO)
    assert demo.returncode == 0, demo.stderr[-3000:]
    printed = dict(line.split(": ", 1) for line in demo.stdout.splitlines() if ": " in line)
    earlier = tmp_path / "earlier_runs"  # tables an earlier demo made with another biLM, where the default goes
    write_record(earlier, "ner", "elmo", 0, 60.0)
    with_bilm(next(earlier.glob("**/results.json")), "e" * 64)
    from reporting import report

    report.main(["--runs", str(earlier), "--out", str(tmp_path / "tables")])
    before = (tmp_path / "tables" / "report.json").read_text()
    other = runs / "other_biLM"  # runs of another biLM beside them: the printed report names its own
    write_record(other, "ner", "elmo", 0, 50.0)
    with_bilm(next(other.glob("**/results.json")), "f" * 64)
    for step in ("the same without ELMo", "a table of the runs"):
        command = shlex.split(printed[step])  # exactly what a user pastes, from the checkout
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 0, (step, printed[step], done.stderr[-3000:])
    out = re.search(r"--out (\S+)", printed["a table of the runs"]).group(1)
    assert re.search(r"/tables-[\w.-]+-[0-9a-f]{12}$", out), out  # a table folder of this biLM's own
    assert (tmp_path / "tables" / "report.json").read_text() == before
    table = (REPO / out if not out.startswith("/") else __import__("pathlib").Path(out)) / "table1.md"
    lines = table.read_text().splitlines()
    row = next(line for line in lines if line.startswith("| ner (f1) "))  # the table a terminal shows
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert re.fullmatch(r"\d+\.\d\d \(n=1\)", cells[1]) and re.fullmatch(r"\d+\.\d\d \(n=1\)", cells[2]), row
    assert re.match(r"[+-]\d+\.\d\d ", cells[3]), row  # the gain
    assert re.match(r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\] p[<=]", cells[4]), row  # one seed: its bootstrap too
    details = next(line for line in lines if line.startswith("| ner (f1; paper"))
    cells = [c.strip() for c in details.strip("|").split("|")]
    assert re.match(r"[+-]\d+\.\d\d / ", cells[3]), details  # the gain and its relative error reduction
    assert re.match(r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\], p", cells[4]), details  # its paired bootstrap interval
