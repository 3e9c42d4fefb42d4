"""The documents a newcomer reads are readable in one go: no line of prose over 200 characters and no
paragraph (or list item) over 120 words in README.md, docs/*.md and RELIABILITY.md. Code blocks and
table rows are not prose (docs/layout.md is a table of where things are)."""

import re

from conftest import REPO

DOCS = [REPO / "README.md", REPO / "RELIABILITY.md", *sorted((REPO / "docs").glob("*.md"))]
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
            if len(line) > 200 and not line.lstrip().startswith("|"):
                problems.append(f"{doc.relative_to(REPO)}:{number}: a line of {len(line)} characters")
        for number, paragraph in paragraphs(text):
            if len(paragraph.split()) > 120:
                problems.append(f"{doc.relative_to(REPO)}:{number}: a paragraph of {len(paragraph.split())} words")
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_long_paragraph_and_a_long_line():
    long_item = "- " + " ".join(["word"] * 121)
    assert [len(p.split()) for _, p in paragraphs(f"intro\n\n{long_item}\n- short\n")] == [1, 122, 2]
    assert paragraphs("```\n" + "x " * 300 + "\n```\n") == []
