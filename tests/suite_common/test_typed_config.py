"""The typed settings: pydantic validates each group from its annotations, and its first error is one line
naming the key, in pydantic's words."""

from typing import Literal

import pytest

from suite_common import typed_config as tc
from suite_common.errors import ConfigError


@tc.settings_group
class Inner:
    sizes: list[tc.integer(1)] = tc.setting([2])
    path: tc.FilePath | None = tc.file_setting("inner_sha256")


@tc.settings_group
class Outer:
    rate: tc.number(0, low_open=True) = tc.setting(0.5)
    share: tc.Probability = tc.setting(0.1)
    count: tc.integer(0, 10) = tc.setting(1)
    flag: tc.Flag = tc.setting(False)
    kind: Literal["a", "b"] = tc.setting("a")
    odd: tc.checked(int, lambda v: None if v % 2 else "must be odd") = tc.setting(1)
    inner: Inner = tc.group(Inner)


def test_a_mapping_becomes_the_group_with_its_defaults_and_numbers_kept_as_given():
    built = tc.build(Outer, {"rate": 2, "inner": {"sizes": [3, 4]}}, "")
    assert built == Outer(rate=2, inner=Inner(sizes=[3, 4]))
    assert type(built.rate) is int  # not made 2.0: a stored configuration's digest stays what it was
    assert tc.plain(built) == {"rate": 2, "share": 0.1, "count": 1, "flag": False, "kind": "a", "odd": 1,
                               "inner": {"sizes": [3, 4], "path": None}}  # fmt: skip


@pytest.mark.parametrize(
    "given, said",
    [
        ({"rate": 0}, "g.rate=0: must be greater than 0"),
        ({"share": 1.0}, "g.share=1.0: must be less than 1"),
        ({"count": 11}, "g.count=11: must be less than or equal to 10"),
        ({"count": 1.5}, "g.count=1.5: must be a valid integer"),
        ({"count": True}, "g.count=True: must be a valid integer"),
        ({"rate": "1"}, "g.rate='1': must be a valid number"),
        ({"rate": float("inf")}, "g.rate=inf: must be a finite number"),
        ({"flag": "yes"}, "g.flag='yes': must be a valid boolean"),
        ({"kind": "c"}, "g.kind='c': must be 'a' or 'b'"),
        ({"odd": 2}, "g.odd=2: must be odd"),
        ({"inner": {"sizes": [1, 0]}}, "g.inner.sizes[1]=0: must be greater than or equal to 1"),
        ({"inner": "x"}, "g.inner='x': must be a dictionary or an instance of Inner"),
        ({"inner": {"path": " "}}, "g.inner.path=' ': an empty path; give a directory or file"),
        ({"rat": 1}, "g.rat: no such setting (did you mean rate?)"),
        ({"inner": {"size": [1]}}, "g.inner.size: no such setting (did you mean sizes?)"),
        ("x", "g='x': must be a mapping of its settings"),
    ],
)
def test_a_bad_value_or_key_is_one_line_naming_it(given, said):
    with pytest.raises(ConfigError) as e:
        tc.build(Outer, given, "g.")
    assert str(e.value).startswith(said) and "\n" not in str(e.value)


def test_whether_a_field_counts_sits_in_its_metadata():
    assert {f.name: f.metadata["counts"] for f in tc.dataclasses.fields(Inner)} == {"sizes": True, "path": False}
    assert tc.counted(Inner(sizes=[5], path="f"), None, {}) == {"sizes": [5]}  # a file counts by its content
    assert list(tc.file_settings(Outer(), None)) == ["inner.path"]
    assert tc.file_settings(Outer(), None)["inner.path"].metadata["hash_name"] == "inner_sha256"
