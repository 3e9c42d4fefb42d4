"""The repository speaks of the project: no tracker numbers and no words about how the work was
organized or which machines were lent, in the configuration, the documents and the code."""

import re

from conftest import REPO

PATTERN = re.compile(
    "|".join(
        [
            r"#[0-9]{1,3}\b",
            r"[Ii]ssue [0-9]+",
            "this " + "workplace",
            r"\blent" + " to\b",
            r"\bthe " + r"session\b",
            "this " + "project's own",
        ]
    )
)
WHERE = ["conf", "docs", "README.md", "RELIABILITY.md", "results", "run.py",
         "elmo_core", "encoders", "bert_core", "tasks", "experiments", "reporting", "suite_common", "benchmarks",
         "tests"]  # fmt: skip


def test_no_tracker_numbers_or_process_words():
    found = []
    for where in WHERE:
        root = REPO / where
        files = [root] if root.is_file() else [p for s in ("py", "md", "yaml") for p in root.rglob(f"*.{s}")]
        for path in files:
            lines = path.read_text(encoding="utf-8").splitlines()
            for k, line in enumerate(lines, 1):
                # the line and the start of the next, so that a phrase broken across lines is read whole
                # (comment and quote marks at the next line's start dropped); a match must start on this line
                following = re.sub(r"^[\s#>*/\"']*", "", lines[k]) if k < len(lines) else ""
                text = f"{line} {following}"
                for m in PATTERN.finditer(text):
                    if m.start() >= len(line):
                        continue  # the next line's own: found there
                    if m.group().startswith("#") and re.search(r"&#[0-9]+;|#[0-9a-fA-F]{6}\b", line):
                        continue  # an HTML entity or a colour, not a tracker number
                    found.append(f"{path.relative_to(REPO)}:{k}: {m.group()!r}")
    assert not found, "\n".join(found)
