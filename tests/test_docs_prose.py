"""The documents a newcomer reads are readable in one go: no line over 200 characters (table rows included) and
no paragraph (or list item) over 120 words in README.md, docs/*.md, RELIABILITY.md, results/README.md and
results/provenance.md; code blocks are not prose. The numbers results/README.md quotes from the current Table 1
are the table's."""

import re

from conftest import REPO

DOCS = [REPO / "README.md", REPO / "RELIABILITY.md", *sorted((REPO / "docs").glob("*.md")),
        REPO / "results" / "README.md", REPO / "results" / "provenance.md"]  # fmt: skip
ITEM = re.compile(r"^\s*([-*] |\d+\. )")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of every paragraph and list item outside code blocks and tables."""
    lines = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S).split("\n")
    found, current, start = [], [], 0
    for number, line in enumerate([*lines, ""], 1):
        boundary = not line.strip() or line.lstrip().startswith(("#", "|")) or ITEM.match(line)
        if boundary and current:
            found.append((start, " ".join(current)))
            current = []
        if line.strip() and not line.lstrip().startswith(("#", "|")):
            start = number if not current else start
            current.append(line.strip())
    return found


def test_no_long_lines_or_paragraphs_of_prose():
    problems = []
    for doc in DOCS:
        text = doc.read_text()
        prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S).split("\n")
        for number, line in enumerate(prose, 1):
            if len(line) > 200:
                problems.append(f"{doc.relative_to(REPO)}:{number}: a line of {len(line)} characters")
        for number, paragraph in paragraphs(text):
            if len(paragraph.split()) > 120:
                problems.append(f"{doc.relative_to(REPO)}:{number}: a paragraph of {len(paragraph.split())} words")
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_long_paragraph_and_a_long_line():
    long_item = "- " + " ".join(["word"] * 121)
    assert [len(p.split()) for _, p in paragraphs(f"intro\n\n{long_item}\n- short\n")] == [1, 122, 2]
    assert paragraphs("```\n" + "x " * 300 + "\n```\n") == []


def test_the_numbers_quoted_from_the_current_table1_are_its_own():
    """Each ``baseline → ELMo`` pair the results README quotes for the current quick Table 1 is a row of
    ``results/small/table1.md`` as it is now (a rebuilt table with other numbers makes the README stale)."""
    readme = (REPO / "results" / "README.md").read_text()
    quoted = next(p for p in readme.split("\n\n") if p.startswith("**Quick profile on the static vectors**"))
    rows = (REPO / "results" / "small" / "table1.md").read_text().splitlines()
    pairs = re.findall(r"(\d+\.\d\d) → (\d+\.\d\d)", quoted)
    assert (
        pairs
        and [f"{a} → {b}" for a, b in pairs if not any(f"| {a} (n=" in row and f"| {b} (n=" in row for row in rows)]
        == []
    )
