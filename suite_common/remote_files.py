"""biLM files by URL or by name (the published ELMo models, Peters et al. 2018 §3.4 and the AllenNLP
model page), as AllenNLP users pass them: ``encoder.options``/``encoder.weights`` (and the embed
command's ``--options``/``--weights``) accept an ``http(s)://`` address, and ``encoder.preset`` (or
``--preset``) names a published model.

A remote file is downloaded once into ``$ELMO_SUITE_CACHE`` (default ``~/.cache/elmo_suite``) under
``remote/<hash of the URL>-<file name>``: streamed with a progress bar into a temporary file,
hashed on the way, and renamed into place only when complete (every byte its ``Content-Length``
announced, and readable as what its name says: an HDF5 file for ``.hdf5``/``.h5``, JSON for
``.json``), with its SHA-256 beside it (``.sha256``); a download cut short is not kept, so a retry
downloads again. Every later use reads the cached copy after checking it against that hash, so a file
changed or damaged in the cache is refused rather than read. A URL may pin the expected hash
(``https://.../weights.hdf5#sha256=<hex>``): a download of other bytes is refused and not kept.
Without the network the error is one line naming the URL.
"""

from __future__ import annotations

import errno
import http.client
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

from .atomic_files import remove_dead_leftovers, rename_into_place, temporary_path
from .errors import WeightsError
from .hashing import file_sha256, new_sha256, sha256_hex
from .progress import progress_bar

S3 = "https://allennlp.s3.amazonaws.com/models/elmo"
# the published biLMs (name -> options URL, weights URL); AllenNLP's ELMo page lists the same files
PRESETS = {
    name: (f"{S3}/{stem}/elmo_{stem}_options.json", f"{S3}/{stem}/elmo_{stem}_weights.hdf5")
    for name, stem in (
        ("elmo-small", "2x1024_128_2048cnn_1xhighway"),
        ("elmo-medium", "2x2048_256_2048cnn_1xhighway"),
        ("elmo-original", "2x4096_512_2048cnn_2xhighway"),
        ("elmo-original-5.5B", "2x4096_512_2048cnn_2xhighway_5.5B"),
    )
}


def cache_root() -> Path:
    return Path(os.environ.get("ELMO_SUITE_CACHE") or Path.home() / ".cache" / "elmo_suite")


def is_url(value) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def preset_files(name: str) -> tuple[str, str]:
    """``(options URL, weights URL)`` of a published biLM."""
    if name not in PRESETS:
        raise WeightsError(f"encoder.preset={name!r}: no such published biLM; choices: {', '.join(PRESETS)}")
    return PRESETS[name]


DISK_ERRNOS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system"}
LOCAL_HINT = "encoder.options=FILE encoder.weights=FILE"  # how run.py takes local files (the embed command: its own)


def max_download_bytes() -> int:
    """The most a download without a ``Content-Length`` may bring (``ELMO_SUITE_MAX_DOWNLOAD_GB``, default
    4: the largest published biLM's weights are under 0.4 GB)."""
    return int(float(os.environ.get("ELMO_SUITE_MAX_DOWNLOAD_GB") or 4) * 1e9)


def check_format(path: Path, name: str) -> str | None:
    """Why the downloaded ``path`` is not what its ``name`` says it is (None when it is). Whatever the
    name, an HTML page (a login, error or redirect page served with status 200) is not a model file."""
    with open(path, "rb") as f:
        head = f.read(512).lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "an HTML page, not the file (a login, error or moved-file page?)"
    if name.endswith((".hdf5", ".h5")):
        try:
            import h5py

            with h5py.File(path, "r"):
                return None
        except ImportError:
            return None
        except OSError as e:
            return f"not a readable HDF5 file ({str(e).splitlines()[0][:120]})"
    if name.endswith(".json"):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            return f"not JSON ({type(e).__name__})"
    return None


def local_path(value, progress: bool = True, hint: str = LOCAL_HINT) -> Path:
    """A local path as it is; a URL as its verified cached copy (downloaded on first use). ``hint``:
    how the calling command takes local files instead, for the message when the download fails."""
    if not is_url(value):
        return Path(value)
    url, _, fragment = value.partition("#")
    pinned = fragment[len("sha256=") :].lower() if fragment.startswith("sha256=") else None
    name = url.rstrip("/").rsplit("/", 1)[-1] or "download"
    target = cache_root() / "remote" / f"{sha256_hex(url)[:16]}-{name}"
    recorded = target.with_name(target.name + ".sha256")
    if target.is_file() and recorded.is_file():
        expected = recorded.read_text().strip()
        if file_sha256(target) != expected:
            raise WeightsError(f"{target} (the cached copy of {url}) fails its checksum; delete it to download again")
        if pinned and expected != pinned:
            raise WeightsError(
                f"{url}#sha256={pinned}: the pin does not match the file at that address (SHA-256 {expected}, "
                "checked when it was downloaded); correct the pin"
            )
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(target.parent)
    tmp = temporary_path(target)
    digest, received = new_sha256(), 0
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            limit = total if total is not None else max_download_bytes()  # never more than announced or the cap
            bar = progress_bar(total=total, unit="B", unit_scale=True, desc=name, disable=not progress)
            try:
                while block := response.read(min(1 << 20, limit + 1 - received)):
                    received += len(block)
                    if received > limit:
                        raise WeightsError(
                            f"{url}: more than "
                            + (f"the {total:,} bytes announced" if total is not None else f"{limit:,} bytes")
                            + " arrived (ELMO_SUITE_MAX_DOWNLOAD_GB raises the cap); nothing was kept"
                        )
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
            except http.client.IncompleteRead as e:
                received += len(e.partial)
            bar.close()
        if total is not None and received != total:
            raise WeightsError(
                f"{url}: the download stopped after {received:,} of {total:,} bytes; nothing was kept, try again"
            )
        problem = check_format(tmp, name)
        if problem:
            raise WeightsError(f"{url}: the download is {problem} (cut short?); nothing was kept, try again")
        if pinned and digest.hexdigest() != pinned:
            raise WeightsError(
                f"{url}: the download's SHA-256 is {digest.hexdigest()[:12]}..., not the pinned "
                f"{pinned[:12]}...; nothing was kept"
            )
        rename_into_place(tmp, target)
        recorded.write_text(digest.hexdigest() + "\n")
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        if isinstance(e, OSError) and not isinstance(e, urllib.error.URLError) and e.errno in DISK_ERRNOS:
            raise WeightsError(
                f"{url}: {DISK_ERRNOS[e.errno]} writing {target.parent} (the download cache, ELMO_SUITE_CACHE); "
                "nothing was kept"
            ) from None
        reason = getattr(e, "reason", None) or e
        raise WeightsError(
            f"{url}: cannot download ({reason}); the published biLMs are only on the network "
            f"({url.split('/')[2]}). Without it, pass local files: {hint}"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    return target
