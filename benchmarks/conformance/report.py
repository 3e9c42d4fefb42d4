"""``results/conformance.md`` and its figure from the comparisons ``compare`` wrote
(``results/conformance/<task>_<arm>.json``) and the findings written beside them
(``results/conformance/findings.md``: per task, the gap's explanation and what was measured to find it).

    python -m benchmarks.conformance.report [--dir results/conformance] [--out results/conformance.md]

For every comparison: the dev metric of both sides after each epoch (the suite's as the mean of its seeds, with
each seed), the gap after the last epoch against the suite's own seed spread (max - min over its seeds), and
the CPU seconds per epoch of each side (each process's CPU time over the epochs it trained: data reading, the
suite's activation cache and the reference's ELMo on every batch included, since both are what a user waits for).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

import matplotlib

from benchmarks.conformance.heads import heads
from suite_common.hashing import file_sha256

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Each task head beside its reference implementation"


def summary(c: dict) -> dict:
    """Last-epoch values, the gap and the seed spread, and each side's CPU seconds per epoch."""
    epochs = c["epochs"]
    ref = [r["dev"][epochs - 1] for r in c["reference"].values()]
    suite = [s["dev"][epochs - 1] for s in c["suite"].values()]
    ref_cpu = sum(r["process_cpu_seconds"] for r in c["reference"].values()) / len(ref) / epochs
    suite_cpu = sum(s["process_cpu_seconds"] for s in c["suite"].values()) / len(suite) / epochs
    ref_mean, suite_mean = sum(ref) / len(ref), sum(suite) / len(suite)
    return {
        "ref": ref_mean,
        "ref_runs": ref,
        "suite": suite_mean,
        "suite_runs": suite,
        "gap": suite_mean - ref_mean,
        "spread": max(suite) - min(suite) if len(suite) > 1 else None,
        "ref_cpu": ref_cpu,
        "suite_cpu": suite_cpu,
    }


def seeds(mean: float, runs: list[float]) -> str:
    return f"{mean:.2f}" + (f" ({', '.join(f'{v:.2f}' for v in runs)})" if len(runs) > 1 else "")


def figure(comparisons: list[dict], out: Path) -> None:
    columns = 3
    rows = -(-len(comparisons) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
    for ax, c in zip(axes.flat, comparisons):
        x = range(1, c["epochs"] + 1)
        for seed, r in c["reference"].items():
            ax.plot(
                x,
                r["dev"],
                "o-",
                color="tab:orange",
                label=f"AllenNLP {heads()[c['task']].REFERENCE_MODEL} (seed {seed})",
            )
        for seed, s in c["suite"].items():
            ax.plot(x, s["dev"], "s--", color="tab:blue", alpha=0.8, label=f"suite (seed {seed})")
        ax.set_title(textwrap.fill(f"{heads()[c['task']].TITLE}, {c['arm']}", 48), fontsize=8)
        ax.set_xlabel("epoch")
        ax.set_ylabel("dev metric")
        ax.set_xticks(list(x))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(comparisons) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=80, pil_kwargs={"optimize": True})  # 19 panels: kept well under 512 KB
    plt.close(fig)


def bilm_versions(comparisons: list[dict]) -> str:
    """The embedded biLM the comparisons read, named by the directory that holds it now: each record names
    ``elmo_core/pretrained/small`` and the SHA-256 of its weights, and ``small`` is replaced when a new biLM
    ships (the one before it moves to ``small-vN``)."""
    shas = sorted({c.get("biLM_weights_sha256") for c in comparisons}, key=str)
    if None in shas:  # a record from before the field: its dates say which
        return "the embedded `elmo_core/pretrained/small` of the records' dates"
    shipped = {file_sha256(p): p.parent.name for p in (ROOT / "elmo_core" / "pretrained").glob("*/weights.hdf5")}
    names = [
        f"`elmo_core/pretrained/{shipped[sha]}`"
        if sha in shipped
        else f"weights SHA-256 {sha[:12]}…, no longer shipped"
        for sha in shas
    ]
    return " and ".join(names) + ", the embedded `small` when the comparisons ran"


def render(comparisons: list[dict], findings: str, figure_name: str, title: str = TITLE) -> str:
    lines = [
        f"# {title}",
        "",
        f"Both sides read the same files, the same biLM ({bilm_versions(comparisons)}, in the original "
        "format) and settings matched to the suite's paper profile; each runs on one CPU thread. The reference is "
        "allennlp-models 2.10.1 in its own environment (`make conformance-env`, `benchmarks/conformance/`). Dev "
        "metrics in percent; each side's cell is the mean of its seeds. Seed spread: max - min of the suite's "
        "seeds. CPU s/epoch: each process's CPU time over its epochs (reading, the suite's activation cache and "
        "the reference's ELMo on every batch included).",
        "",
        "| task | arm | reference head | train data | epochs | reference dev (seeds) | suite dev (seeds) | gap | "
        "suite seed spread | CPU s/epoch reference / suite | suite ÷ reference |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    head = heads()
    for c in comparisons:
        s = summary(c)
        spread = f"{s['spread']:.2f}" if s["spread"] is not None else "—"
        lines.append(
            f"| {head[c['task']].TITLE} | {c['arm']} | `{head[c['task']].REFERENCE_MODEL}` | {c['notes'][0]} | "
            f"{c['epochs']} | "
            f"{seeds(s['ref'], s['ref_runs'])} | {seeds(s['suite'], s['suite_runs'])} | "
            f"{s['gap']:+.2f} | {spread} | {s['ref_cpu']:.0f} / {s['suite_cpu']:.0f} | "
            f"{s['suite_cpu'] / s['ref_cpu']:.2f} |"
        )
    lines += [
        "",
        f"![dev curves of both sides]({figure_name})",
        "",
        findings.strip(),
        "",
        "## Curves, settings, commands",
        "",
    ]
    for c in comparisons:
        lines += [f"### {head[c['task']].TITLE}, {c['arm']}", ""]
        columns = [f"reference seed {k}" for k in c["reference"]] + [f"suite seed {k}" for k in c["suite"]]
        lines += ["| epoch | " + " | ".join(columns) + " |"]
        lines += ["|---" * (1 + len(c["reference"]) + len(c["suite"])) + "|"]
        for e in range(c["epochs"]):
            cells = [f"{r['dev'][e]:.2f}" for r in c["reference"].values()] + [
                f"{s['dev'][e]:.2f}" for s in c["suite"].values()
            ]
            lines.append(f"| {e + 1} | " + " | ".join(cells) + " |")
        lines += ["", "Matched settings:", ""] + [f"- {m}" for m in c["matched"]] + [""]
        lines += [f"Data: {'; '.join(c['notes'])}.", ""]
        lines += ["Commands (`OUT`, `RUNS`, `CACHE`: directories under `--work`):", ""]
        lines += [f"- `{c['command']}` (both sides, run after run; a run finished under `--work` is read back)"]
        lines += [f"- reference: `{r['command']}`" for r in list(c["reference"].values())[:1]]
        lines += [f"- suite: `{s['command']}`" for s in list(c["suite"].values())[:1]]
        lines += [
            "",
            f"Hardware: {c['hardware']}; {c['dates'][0]} to {c['dates'][1]}; the suite at commit {c['suite_commit']}.",
            "",
        ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=ROOT / "results" / "conformance", help="the comparisons' JSON files")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "conformance.md", help="the page (and its figure)")
    ap.add_argument("--title", default=TITLE, help="the page's heading")
    a = ap.parse_args(argv)
    found = {p.stem: json.loads(p.read_text()) for p in sorted(a.dir.glob("*_*.json"))}
    if not found:
        raise SystemExit(f"error: no comparisons in {a.dir} (python -m benchmarks.conformance.compare --task ...)")
    comparisons = sorted(found.values(), key=lambda c: (list(heads()).index(c["task"]), c["arm"] != "elmo"))
    findings = (a.dir / "findings.md").read_text() if (a.dir / "findings.md").exists() else ""
    figure_path = a.out.with_name(f"{a.out.stem}_curves.png")  # conformance.md: conformance_curves.png
    figure(comparisons, figure_path)
    a.out.write_text(render(comparisons, findings, figure_path.name, a.title))
    print(f"wrote {a.out} and {figure_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
