"""Typed settings: each configuration group is a dataclass whose fields declare, next to themselves,
their default, the values they accept and what they are to a run's identity (Peters et al. 2018's
experiments are compared cell by cell, so a cell must hold one configuration's runs only).

A field is made with ``setting`` (a value) or ``file_setting`` (a path to something the run reads).
Its ``identity`` role is one of:

* ``COUNTS``: the value can change the result, so it is part of the identity (optionally only
  ``when`` a condition on the whole run holds: a Hugging Face dataset's name only when the hub's copy
  is read);
* ``CONTENT``: a file (or directory) the run reads: its content's SHA-256 counts, never its path; such a
  field names the entry of the identity that holds the hash (``hash_name``);
* ``LOCATION``: where files are looked up (a data directory, a cache directory): the files read there
  count by their content, through the group that reads them;
* ``RUNTIME``: how and where the run executes (device, threads, mode, output root);
* ``NEUTRAL``: decides only whether a run goes ahead or stops (a size budget, a strictness flag).

``build(cls, mapping, where)`` makes a group from a plain mapping (a composed Hydra configuration, or a
record's stored one): an unknown key is refused with the nearest known ones, a value a field cannot take
with one line naming the key. ``counted(obj, run)`` walks a built group and returns what counts of it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import typing
from collections.abc import Callable
from numbers import Real

from .errors import ConfigError

COUNTS, CONTENT, LOCATION, RUNTIME, NEUTRAL = "counts", "content", "location", "runtime", "neutral"
ROLES = (COUNTS, CONTENT, LOCATION, RUNTIME, NEUTRAL)


def setting(
    default,
    check: Callable | None = None,
    identity: str = COUNTS,
    when: Callable | None = None,
    convert: Callable | None = None,
    added_after_records: bool = False,
):
    """A field holding a value. ``check(value)`` returns None or what is wrong with it; ``when(run)``
    says whether it counts in this run; ``convert``: the type a checked value is turned into (an enum).
    ``added_after_records``: a setting added when records already existed, whose default is what those
    runs did; it counts only off its default, so their identities stay what they were."""
    if identity not in ROLES or identity == CONTENT:
        raise ValueError(f"identity role {identity!r}: a value field is one of {ROLES} but not {CONTENT!r}")
    meta = {"check": check, "identity": identity, "when": when, "convert": convert, "added": added_after_records}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def file_setting(hash_name: str, in_config: bool = False, default=None):
    """A field naming a file or directory the run reads: its content counts under ``hash_name`` of the
    identity. ``in_config``: the hash also stands in the field's place in the counted configuration
    (``"sha256:<hash>"``; an unset field counts as unset)."""
    meta = {"check": path_or_none, "identity": CONTENT, "hash_name": hash_name, "in_config": in_config}
    return dataclasses.field(default=default, metadata=meta)


def group(cls_or_factory, when: Callable | None = None, identity: str = COUNTS):
    """A field holding a nested group (a dataclass): built by ``build``; ``when(run)``: counts only then."""
    meta = {"check": None, "identity": identity, "when": when, "group": True}
    return dataclasses.field(default_factory=cls_or_factory, metadata=meta)


def role(f: dataclasses.Field) -> str:
    return f.metadata.get("identity", COUNTS)


# ---- checks: each returns None or what is wrong -------------------------------------------------------


def one_of(*choices):
    return lambda v: None if v in choices else f"must be one of {', '.join(map(str, choices))}"


def boolean(v):
    return None if isinstance(v, bool) else "must be true or false"


def integer(low: int | None = None, high: int | None = None, optional: bool = False):
    def check(v):
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            return "must be an integer"
        if low is not None and v < low:
            return f"must be at least {low}"
        return f"must be at most {high}" if high is not None and v > high else None

    return check


def number(low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, Real):
            return "must be a number"
        if not math.isfinite(v):
            return "must be a finite number"
        if low is not None and (v <= low if low_open else v < low):
            return f"must be {'greater than' if low_open else 'at least'} {low}"
        if high is not None and (v >= high if high_open else v > high):
            return f"must be {'less than' if high_open else 'at most'} {high}"
        return None

    return check


PROBABILITY = number(0, 1, high_open=True)


def path_or_none(v):
    return None if v is None or isinstance(v, str) else "must be a path (or null)"


def text_or_none(v):
    return None if v is None or isinstance(v, str) else "must be text (or null)"


# ---- building from a mapping ----------------------------------------------------------------------


def _finite_numbers(value, key: str):
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key}={value!r}: must be a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _finite_numbers(v, f"{key}.{k}")
    if isinstance(value, list):
        for i, v in enumerate(value):
            _finite_numbers(v, f"{key}[{i}]")


def unknown_key(where: str, key: str, known: list[str]) -> ConfigError:
    near = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(sorted(known))}"
    return ConfigError(f"{where}{key}: no such setting ({hint})")


def build(cls, mapping, where: str, nested: dict | None = None):
    """``cls`` from ``mapping`` (missing keys take the field's default). ``nested``: a builder per
    group field (``name -> callable(mapping, where)``) where the group's class depends on its values."""
    mapping = dict(mapping or {})
    names = [f.name for f in dataclasses.fields(cls)]
    for key in mapping:
        if key not in names:
            raise unknown_key(where, str(key), names)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in mapping:
            continue
        value, key = mapping[f.name], f"{where}{f.name}"
        if f.metadata.get("group"):
            make = (nested or {}).get(f.name)
            value = make(value, f"{key}.") if make else build(f.default_factory().__class__, value, f"{key}.")
        else:
            _finite_numbers(value, key)
            problem = f.metadata.get("check") and f.metadata["check"](value)
            if problem:
                raise ConfigError(f"{key}={value!r}: {problem}")
            if f.metadata.get("convert"):
                value = f.metadata["convert"](value)
        values[f.name] = value
    return cls(**values)


def plain(obj) -> dict:
    """A group as the plain mapping it was built from (every field, nested groups as mappings, an enum as its
    value)."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        out[f.name] = plain(value) if dataclasses.is_dataclass(value) else getattr(value, "value", value)
    return out


# ---- the identity walk ------------------------------------------------------------------------------


def defaults_of(f: dataclasses.Field) -> tuple:
    """A field's default as a group holds it: as declared (built by its factory) when the mapping left it
    out, and converted when the mapping gave it."""
    value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    convert = f.metadata.get("convert")
    return (value, convert(value)) if convert and value is not None else (value,)


def counted(obj, run, file_hashes: dict[str, str], where: str = "") -> dict:
    """What of ``obj`` counts in ``run``'s identity: every ``COUNTS`` field (when its condition holds),
    nested groups walked the same way; a ``CONTENT`` field with ``in_config`` stands as its file's hash
    (``file_hashes[path]``)."""
    out = {}
    for f in dataclasses.fields(obj):
        value, key = getattr(obj, f.name), f"{where}{f.name}"
        kind = role(f)
        if kind == CONTENT and f.metadata.get("in_config"):
            out[f.name] = None if value is None else "sha256:" + file_hashes.get(key, "unknown")
            continue
        if kind != COUNTS or (f.metadata.get("when") and not f.metadata["when"](run)):
            continue
        if f.metadata.get("added") and any(value == d for d in defaults_of(f)):
            continue
        nested = dataclasses.is_dataclass(value)
        out[f.name] = counted(value, run, file_hashes, f"{key}.") if nested else value
    return out


def content_fields(cls, where: str = "") -> dict[str, dataclasses.Field]:
    """Every ``CONTENT`` field below ``cls``, by dotted path (nested groups by their default's class)."""
    out = {}
    for f in dataclasses.fields(cls):
        if role(f) == CONTENT:
            out[f"{where}{f.name}"] = f
        elif f.metadata.get("group"):
            out.update(content_fields(f.default_factory().__class__, f"{where}{f.name}."))
    return out


def annotation_mentions_path(cls, f: dataclasses.Field) -> bool:
    """Whether a field's type says it holds a path (``FilePath``)."""
    hints = typing.get_type_hints(cls)
    return "FilePath" in str(hints.get(f.name, ""))


FilePath = typing.NewType("FilePath", str)  # a file or directory a run reads: declare it with file_setting
