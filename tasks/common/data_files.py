"""Which local files a data configuration reads (Peters et al. 2018 §4: each task's train/dev/test
data), decided here once: the task readers, the probes and a run's identity all ask this.

Per split, ``data.<split>_path``, else ``data.dir``/``data.<split>_file``; a directory read as a whole
(the WSD probe) is every file in it. Hugging Face sources have no local files (their name,
configuration and revision are in the configuration).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path


def data_files(data_cfg) -> dict[str, Path]:
    """The local files a data configuration (a typed data group, or a plain mapping of one) reads:
    ``<split>_path`` or ``dir``/``<split>_file`` per split; a directory read as a whole (the WSD probe)
    contributes every file in it. Hugging Face sources contribute none (their name, configuration and
    revision are in the configuration)."""
    if dataclasses.is_dataclass(data_cfg):  # a typed group: every data shape has dir, not every one each split
        data_cfg = {f.name: getattr(data_cfg, f.name) for f in dataclasses.fields(data_cfg)}
    files = {}
    for split in ("train", "dev", "test"):
        path = data_cfg.get(f"{split}_path")
        if not path and data_cfg.get("dir") and data_cfg.get(f"{split}_file"):
            path = Path(data_cfg["dir"]) / data_cfg[f"{split}_file"]
        if path:
            files[split] = Path(path)
    if data_cfg.get("dir") and not files and Path(data_cfg["dir"]).is_dir():
        root = Path(data_cfg["dir"])
        files = {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}
    return files
