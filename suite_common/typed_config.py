"""Typed settings: each configuration group is a dataclass validated by pydantic (its annotations are the
schema: types, ranges, choices), whose fields declare beside themselves their default and what they are
to a run's identity (Peters et al. 2018's experiments are compared cell by cell, so a cell must hold one
configuration's runs only).

A field is made with ``setting`` (a value), ``file_setting`` (a path to something the run reads) or
``group`` (a nested group). Its ``identity`` role, in the field's metadata, is one of:

* ``COUNTS``: the value can change the result, so it is part of the identity (optionally only
  ``when`` a condition on the whole run holds: a Hugging Face dataset's name only when the hub's copy
  is read);
* ``CONTENT``: a file (or directory) the run reads: its content's SHA-256 counts, never its path; such a
  field names the entry of the identity that holds the hash (``hash_name``);
* ``LOCATION``: where files are looked up (a data directory, a cache directory): the files read there
  count by their content, through the group that reads them;
* ``RUNTIME``: how and where the run executes (device, threads, mode, output root);
* ``NEUTRAL``: decides only whether a run goes ahead or stops (a size budget, a strictness flag).

``build(cls, mapping, where)`` validates a plain mapping (a composed Hydra configuration, or a record's
stored one) into the group: pydantic's first error becomes one ``ConfigError`` line naming the key (an
unknown key with the nearest known ones). ``counted(obj, run)`` walks a built group and returns what
counts of it.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import typing
from collections.abc import Callable
from functools import cache
from typing import Annotated, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import AfterValidator, ConfigDict, Strict, TypeAdapter, ValidationError

from .errors import ConfigError

COUNTS, CONTENT, LOCATION, RUNTIME, NEUTRAL = "counts", "content", "location", "runtime", "neutral"
ROLES = (COUNTS, CONTENT, LOCATION, RUNTIME, NEUTRAL)
SCHEMA = ConfigDict(extra="forbid", allow_inf_nan=False)  # every group: no unknown key, no NaN or infinity


def settings_group(cls):
    """A frozen dataclass whose annotations pydantic validates (``build``)."""
    cls.__pydantic_config__ = SCHEMA
    return dataclasses.dataclass(frozen=True)(cls)


def setting(default, *, identity: str = COUNTS, when: Callable | None = None, added_after_records: bool = False,
            in_base: bool = True):  # fmt: skip
    """A field holding a value. ``when(run)`` says whether it counts in this run. ``added_after_records``: a
    setting added when records already existed, whose default is what those runs did; it counts only off its
    default, so their identities stay what they were. ``in_base=False``: accepted (a profile may set it) but
    left out of the composed base configuration (``experiments.config_store``)."""
    if identity not in ROLES or identity == CONTENT:
        raise ValueError(f"identity role {identity!r}: a value field is one of {ROLES} but not {CONTENT!r}")
    meta = {"identity": identity, "when": when, "added": added_after_records, "in_base": in_base}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def file_setting(hash_name: str, *, in_config: bool = False, default=None):
    """A field naming a file or directory the run reads: its content counts under ``hash_name`` of the
    identity. ``in_config``: the hash also stands in the field's place in the counted configuration
    (``"sha256:<hash>"``; an unset field counts as unset)."""
    meta = {"identity": CONTENT, "hash_name": hash_name, "in_config": in_config}
    return dataclasses.field(default=default, metadata=meta)


def group(cls_or_factory, *, when: Callable | None = None, identity: str = COUNTS):
    """A field holding a nested group; ``when(run)``: it counts only then."""
    return dataclasses.field(
        default_factory=cls_or_factory, metadata={"identity": identity, "when": when, "group": True}
    )


def role(f: dataclasses.Field) -> str:
    return f.metadata.get("identity", COUNTS)


# ---- the value types (pydantic and annotated-types constraints) -------------------------------------------

Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]


def integer(low: int | None = None, high: int | None = None, optional: bool = False):
    bounds = [c for c in (low is not None and Ge(low), high is not None and Le(high)) if c]
    kind = Annotated[int, Strict(), *bounds]
    return kind | None if optional else kind


def number(low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False):
    """A real number, kept as given (an integer stays one, so that a stored configuration's digest does not move)."""
    bounds = [(Gt if low_open else Ge)(low)] if low is not None else []
    bounds += [(Lt if high_open else Le)(high)] if high is not None else []
    return Annotated[Annotated[int, Strict()] | Annotated[float, Strict()], *bounds]


def one_of(*choices):
    return Literal[choices]


def checked(kind, check: Callable):
    """``kind`` with a check of our own: ``check(value)`` returns None or what is wrong with it."""

    def validate(value):
        problem = check(value)
        if problem:
            raise ValueError(problem)
        return value

    return Annotated[kind, AfterValidator(validate)]


Probability = number(0, 1, high_open=True)


def blank_path(value: str) -> str | None:
    """What is wrong with a path setting given as empty text (``runs_root=``): it would be read as the
    working directory, and with a subdirectory joined to it as the file system's root."""
    return (
        "an empty path; give a directory or file (or leave the setting out for its default)"
        if not value.strip()
        else None
    )


PathText = checked(str, blank_path)  # a file or directory the run reads or writes, never empty
# a file or directory a run reads: declare it with file_setting (its content counts in the identity)
FilePath = checked(typing.NewType("FilePath", str), blank_path)


# ---- building from a mapping ----------------------------------------------------------------------


@cache
def _adapter(cls) -> TypeAdapter:
    return TypeAdapter(cls)


def unknown_key(where: str, key: str, known: list[str]) -> ConfigError:
    near = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(sorted(known))}"
    return ConfigError(f"{where}{key}: no such setting ({hint})")


WORDS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "dataclass_type": "must be a mapping of its settings",
}


def _problem(errors: list[dict]) -> str:
    """One phrase for a field's errors (a union reports one per member: the most telling is kept)."""
    kinds = {e["type"]: e for e in errors}
    for kind in ("literal_error", "enum"):
        if kind in kinds:
            return "must be one of " + ", ".join(re.findall(r"'([^']*)'", kinds[kind]["ctx"]["expected"]))
    if "value_error" in kinds:
        return str(kinds["value_error"]["ctx"]["error"])
    for kind, words in WORDS.items():
        if kind in kinds:
            return words.format(**{k: _number(v) for k, v in (kinds[kind].get("ctx") or {}).items()})
    if "float_type" in kinds:
        return "must be a number"
    if "int_type" in kinds or "int_from_float" in kinds:
        return "must be an integer"
    return errors[0]["msg"]


def _number(v):
    return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 1e15 and not isinstance(v, bool) else v


def _split(cls, loc: tuple) -> tuple[list[str], type | None]:
    """The field path of an error's location, and the group class it ends in (the tags pydantic adds for a
    union's members, a validator or a mapping's keys are left out)."""
    path, node = [], cls
    for part in loc:
        fields = {f.name: f for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
        if isinstance(part, str) and part in fields:
            path.append(part)
            node = _group_class(node, fields[part])
        elif isinstance(part, int) and path:
            path[-1] = f"{path[-1]}[{part}]"
        elif node is not None and path:
            break
    return path, node


def _group_class(owner, f: dataclasses.Field) -> type | None:
    """The class of a nested group field (its annotation's, or its default's), None for a value field."""
    hint = typing.get_type_hints(owner).get(f.name)
    if dataclasses.is_dataclass(hint):
        return hint
    return type(f.default_factory()) if f.metadata.get("group") else None


def build(cls, mapping, where: str):
    """``cls`` from ``mapping`` (missing keys take the field's default)."""
    if mapping is not None and not isinstance(mapping, dict):
        raise ConfigError(f"{where.rstrip('.')}={mapping!r}: must be a mapping of its settings")
    try:
        return _adapter(cls).validate_python(mapping or {})
    except ValidationError as e:
        first = e.errors()[0]
        if first["type"] == "unexpected_keyword_argument":  # the last part of its location is the unknown key
            path, node = _split(cls, first["loc"][:-1])
            known = [f.name for f in dataclasses.fields(node)] if dataclasses.is_dataclass(node) else []
            raise unknown_key(where + "".join(f"{p}." for p in path), str(first["loc"][-1]), known) from None
        path, _ = _split(cls, first["loc"])
        same = [x for x in e.errors() if _split(cls, x["loc"])[0] == path]
        raise ConfigError(f"{where}{'.'.join(path)}={first['input']!r}: {_problem(same)}") from None


def plain(obj, base: bool = False) -> dict:
    """A group as the plain mapping it was built from (every field, nested groups as mappings, an enum as its
    value); ``base``: less the fields declared ``in_base=False`` (a group's base in the composed configuration)."""
    out = {}
    for f in dataclasses.fields(obj):
        if base and not f.metadata.get("in_base", True):
            continue
        value = getattr(obj, f.name)
        out[f.name] = plain(value, base) if dataclasses.is_dataclass(value) else getattr(value, "value", value)
    return out


# ---- the identity walk ------------------------------------------------------------------------------


def default_of(f: dataclasses.Field):
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


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
        if f.metadata.get("added") and value == default_of(f):
            continue
        nested = dataclasses.is_dataclass(value)
        out[f.name] = counted(value, run, file_hashes, f"{key}.") if nested else getattr(value, "value", value)
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
