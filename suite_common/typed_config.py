"""Typed settings. Peters et al. 2018's experiments are compared cell by cell, so each field of a group says
beside itself its default and whether it counts in a run's identity. A group is a frozen dataclass that
pydantic validates; its fields are ``setting(default, counts=...)``, ``file_setting(hash_name)`` (a file the
run reads: its content counts, never its path) or ``group(cls)``. ``build`` turns pydantic's first error
into one ``ConfigError`` line naming the key; ``counted`` is what of a group counts in a run.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Callable
from functools import cache
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, Strict, StrictFloat, StrictInt, TypeAdapter, ValidationError

from .errors import ConfigError


def settings_group(cls):
    """A frozen dataclass whose annotations pydantic validates (no unknown key, no NaN or infinity)."""
    cls.__pydantic_config__ = ConfigDict(extra="forbid", allow_inf_nan=False)
    return dataclasses.dataclass(frozen=True)(cls)


_NO_EARLIER = object()


def setting(default, *, counts: bool = True, when: Callable | None = None, added_after_records: bool = False,
            in_base: bool = True, earlier=_NO_EARLIER):  # fmt: skip
    """A value. ``counts=False``: how or where a run executes, not what it computes; ``when(run)``: it counts
    only then. ``added_after_records``: its default is what earlier records did, so it counts only off it.
    ``in_base=False``: accepted (a profile may set it) but not in the composed base configuration.
    ``earlier``: the default changed; a stored configuration without the key had this value (``build``)."""
    meta = {"counts": counts, "when": when, "uncounted": (default,) if added_after_records else (), "in_base": in_base}
    if earlier is not _NO_EARLIER:
        meta["earlier"] = earlier
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def file_setting(hash_name: str, *, in_config: bool = False, default=None, earlier=_NO_EARLIER, resolve=None):
    """A file the run reads, counted under ``hash_name`` of the identity. ``in_config``: its hash also
    stands in its place in the counted configuration (``"sha256:<hash>"``). ``earlier``: as for ``setting``.
    ``resolve(value, group)``: the file a value names, given its group (a name such as ``shipped``)."""
    meta = {"counts": False, "hash_name": hash_name, "in_config": in_config, "resolve": resolve}
    if earlier is not _NO_EARLIER:
        meta["earlier"] = earlier
    return dataclasses.field(default=default, metadata=meta)


def group(cls_or_factory, *, counts: bool = True, when: Callable | None = None):
    return dataclasses.field(default_factory=cls_or_factory, metadata={"counts": counts, "when": when, "group": True})


def counts_in(f: dataclasses.Field, run) -> bool:
    """Whether a value field or group counts in ``run`` (a file setting counts by its content instead)."""
    return f.metadata.get("counts", True) and (f.metadata.get("when") is None or f.metadata["when"](run))


Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]


def integer(low: int | None = None, high: int | None = None):
    return Annotated[int, Strict(), Field(ge=low, le=high)]


def number(low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False):
    """A real number, kept as given (an integer stays one, so that a stored configuration's digest does not move)."""
    bounds = Field(**{"gt" if low_open else "ge": low, "lt" if high_open else "le": high})
    return Annotated[StrictInt | StrictFloat, bounds]


def checked(kind, check: Callable):
    """``kind`` with a check of our own: ``check(value)`` returns None or what is wrong with it."""

    def validate(value):
        if problem := check(value):
            raise ValueError(problem)
        return value

    return Annotated[kind, AfterValidator(validate)]


def blank_path(value: str) -> str | None:
    """An empty path (``runs_root=``) would be read as the working directory, or joined as the root."""
    empty = "an empty path; give a directory or file (or leave the setting out for its default)"
    return None if value.strip() else empty


Probability = number(0, 1, high_open=True)
PathText = checked(str, blank_path)  # a file or directory the run reads or writes, never empty
FilePath = checked(typing.NewType("FilePath", str), blank_path)  # a file a run reads: declare it with file_setting


def nearest(word: str, candidates, n: int = 1, cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` for the ``n`` closest of ``candidates``, or nothing."""
    match = difflib.get_close_matches(word, sorted(candidates), n=n, cutoff=cutoff)
    return f" (did you mean {', '.join(match)}?)" if match else ""


def _names(loc: tuple, mapping) -> list:
    """The keys (and list indices) of an error's location in the mapping given, less pydantic's tags."""
    names, node = [], mapping
    for part in loc:
        if (isinstance(node, dict) and part in node) or (isinstance(node, list) and isinstance(part, int)):
            names.append(part)
            node = node[part]
    return names


def with_earlier_defaults(cls, mapping: dict) -> dict:
    """``mapping`` with the ``earlier`` value of each field it leaves out whose default has changed since,
    nested groups included: a configuration composed today names every key, so one without the key was
    stored before the change, when it meant the earlier default."""
    out = dict(mapping)
    for f in dataclasses.fields(cls):
        if f.name not in out:
            if "earlier" in f.metadata:
                out[f.name] = f.metadata["earlier"]
        elif f.metadata.get("group") and isinstance(out[f.name], dict):
            nested = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
            if dataclasses.is_dataclass(nested):
                out[f.name] = with_earlier_defaults(type(nested), out[f.name])
    return out


def declared_only(cls, mapping: dict, where: str = "") -> tuple[dict, list[str]]:
    """``mapping`` less the keys ``cls`` does not declare (nested groups walked the same way), and those keys
    by dotted name: what a stored configuration held of settings since removed. A group whose class follows
    a value (a field typed ``object``) is kept as it is, for its owner to read with its own class."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kept, removed = {}, []
    for key, value in mapping.items():
        f = fields.get(key)
        if f is None:
            removed.append(f"{where}{key}")
            continue
        nested = f.default_factory() if f.metadata.get("group") else None
        if dataclasses.is_dataclass(nested) and f.type not in ("object", object) and isinstance(value, dict):
            value, inner = declared_only(type(nested), value, f"{where}{key}.")
            removed += inner
        kept[key] = value
    return kept, removed


def file_value(group, f: dataclasses.Field):
    """The file a file setting of ``group`` names (its ``resolve`` applied), or None."""
    value = getattr(group, f.name)
    resolve = f.metadata.get("resolve")
    return resolve(value, group) if resolve is not None and value is not None else value


def build(cls, mapping, where: str):
    """``cls`` from ``mapping`` (missing keys take the field's default, or its ``earlier`` value)."""
    if mapping is not None and not isinstance(mapping, dict):
        raise ConfigError(f"{where.rstrip('.')}={mapping!r}: must be a mapping of its settings")
    try:
        return _adapter(cls).validate_python(with_earlier_defaults(cls, mapping or {}))
    except ValidationError as e:
        first, names = e.errors()[0], _names(e.errors()[0]["loc"], mapping)
        parent = cls()
        for name in names[:-1]:
            parent = getattr(parent, name, None) if isinstance(name, str) else None
        if first["type"] == "unexpected_keyword_argument":
            known = [f.name for f in dataclasses.fields(parent)] if dataclasses.is_dataclass(parent) else []
            hint = nearest(names[-1], known, n=3, cutoff=0.5) or f" (known: {', '.join(sorted(known))})"
            raise ConfigError(f"{where}{'.'.join(map(str, names))}: no such setting{hint}") from None
        key = where + "".join(f"[{n}]" if isinstance(n, int) else f".{n}" for n in names).lstrip(".")
        said = [x["msg"] for x in e.errors() if _names(x["loc"], mapping) == names][-1]  # a union's widest last
        said = said.removeprefix("Value error, ").replace("Input should be", "must be")
        node = parent if not names else getattr(parent, names[-1], None) if isinstance(names[-1], str) else None
        group_wide = dataclasses.is_dataclass(node) and isinstance(first["input"], dict)  # its __post_init__
        raise ConfigError(f"{key.rstrip('.')}: {said}" if group_wide else f"{key}={first['input']!r}: {said}") from None


@cache
def _adapter(cls) -> TypeAdapter:
    return TypeAdapter(cls)


def plain(obj, base: bool = False) -> dict:
    """A group as the plain mapping it was built from; ``base``: less the fields declared ``in_base=False``."""
    keep = {f.name for f in dataclasses.fields(obj) if not base or f.metadata.get("in_base", True)}
    return {k: v for k, v in dataclasses.asdict(obj).items() if k in keep}


def counted(obj, run, file_hashes: dict[str, str], where: str = "") -> dict:
    """What of ``obj`` counts in ``run``'s identity, nested groups walked the same way; a file setting with
    ``in_config`` stands as its file's hash (``file_hashes[dotted path]``)."""
    out = {}
    for f in dataclasses.fields(obj):
        value, key = getattr(obj, f.name), f"{where}{f.name}"
        if f.metadata.get("in_config"):
            out[f.name] = None if file_value(obj, f) is None else "sha256:" + file_hashes.get(key, "unknown")
        elif counts_in(f, run) and value not in f.metadata.get("uncounted", ()):
            nested = dataclasses.is_dataclass(value)
            out[f.name] = counted(value, run, file_hashes, f"{key}.") if nested else value
    return out


def file_settings(obj, run, where: str = "") -> dict[str, dataclasses.Field]:
    """Every file setting of ``obj`` and of its groups that count in ``run``, by dotted path."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if "hash_name" in f.metadata:
            out[f"{where}{f.name}"] = f
        elif dataclasses.is_dataclass(value) and counts_in(f, run):
            out.update(file_settings(value, run, f"{where}{f.name}."))
    return out
