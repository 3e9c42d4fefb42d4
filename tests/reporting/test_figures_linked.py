"""Every figure under ``results/`` (outside ``history/``) is linked from a markdown file, so that no
figure sits where nobody points to it."""

import re

from conftest import REPO


def test_every_current_figure_is_linked_from_a_markdown_file():
    results = REPO / "results"
    linked = set()
    for doc in [*results.rglob("*.md"), REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)\s]+\.png)\)|`([^`\s]+\.png)`", doc.read_text()):
            name = next(t for t in target if t)
            linked.add((doc.parent / name).resolve())
            linked.add((REPO / name).resolve())
    figures = [p for p in results.rglob("*.png") if "history" not in p.relative_to(results).parts]
    assert figures
    assert [str(p.relative_to(REPO)) for p in figures if p.resolve() not in linked] == []
