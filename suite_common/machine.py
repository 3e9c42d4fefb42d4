"""What machine made a number: the processor's name. Runs seeded alike give the same numbers to the last
digit on one processor model, and may differ in the last digits on another (the math libraries pick
different kernels), so records and benchmark reports name it."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The processor's name from ``/proc/cpuinfo`` (``platform.processor()`` where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"
