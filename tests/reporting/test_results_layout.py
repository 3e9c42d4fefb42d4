"""results/ reads top-down for someone who was not there: a short README, the current tables of each
profile in their directories, and every superseded folder indexed in history/README.md."""

from conftest import REPO

RESULTS = REPO / "results"


def test_the_readme_is_short():
    lines = (RESULTS / "README.md").read_text().splitlines()
    assert len(lines) <= 80 and max(map(len, lines)) <= 400


def test_no_table_of_the_report_at_the_top_level():
    """The report's tables live in a table directory (``small/``, ``paper/``, ``history/...``), never at the top."""
    assert not (RESULTS / "report.json").exists() and not (RESULTS / "runs").exists()
    assert not [p.name for p in RESULTS.glob("table[1-3]*")] and not (RESULTS / "probes.md").exists()


def test_every_history_folder_is_indexed():
    index = (RESULTS / "history" / "README.md").read_text()
    folders = sorted(p.name for p in (RESULTS / "history").iterdir() if p.is_dir())
    assert folders and [f for f in folders if f"`{f}/" not in index] == []
