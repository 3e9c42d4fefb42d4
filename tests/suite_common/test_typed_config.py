"""The typed settings: pydantic validates each group from its annotations, and its first error is one line
naming the key in the suite's words."""

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
    kind: tc.one_of("a", "b") = tc.setting("a")
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
        ({"count": 11}, "g.count=11: must be at most 10"),
        ({"count": 1.5}, "g.count=1.5: must be an integer"),
        ({"count": True}, "g.count=True: must be an integer"),
        ({"rate": "1"}, "g.rate='1': must be a number"),
        ({"rate": float("inf")}, "g.rate=inf: must be a finite number"),
        ({"flag": "yes"}, "g.flag='yes': must be true or false"),
        ({"kind": "c"}, "g.kind='c': must be one of a, b"),
        ({"odd": 2}, "g.odd=2: must be odd"),
        ({"inner": {"sizes": [1, 0]}}, "g.inner.sizes[1]=0: must be at least 1"),
        ({"inner": "x"}, "g.inner='x': must be a mapping of its settings"),
        ({"rat": 1}, "g.rat: no such setting (did you mean rate?)"),
        ({"inner": {"size": [1]}}, "g.inner.size: no such setting (did you mean sizes?)"),
    ],
)
def test_a_bad_value_or_key_is_one_line_naming_it(given, said):
    with pytest.raises(ConfigError) as e:
        tc.build(Outer, given, "g.")
    assert str(e.value) == said


def test_identity_roles_sit_in_the_fields_metadata():
    roles = {f.name: tc.role(f) for f in tc.dataclasses.fields(Inner)}
    assert roles == {"sizes": tc.COUNTS, "path": tc.CONTENT}
    assert tc.counted(Inner(sizes=[5], path="f"), None, {}) == {"sizes": [5]}
    with pytest.raises(ValueError, match="identity role"):
        tc.setting(1, identity="sometimes")
