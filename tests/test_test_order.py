"""The order the test workers take the tests in (``conftest.slowest_first``): each worker's share starts with its
turn of the slowest tests, the others keep their order, and no test is lost or repeated."""

from types import SimpleNamespace

from conftest import SLOWEST, slowest_first


def test_each_workers_share_starts_with_its_turn_of_the_slowest_tests():
    items = [SimpleNamespace(nodeid=f"tests/test_{k}.py::t") for k in range(20)]
    items[3], items[11], items[17] = (SimpleNamespace(nodeid=n) for n in SLOWEST[:3])
    out = slowest_first(items, workers=2)
    assert sorted(id(i) for i in out) == sorted(id(i) for i in items)
    first, second = out[:10], out[10:]  # worksteal hands the first worker len // 2
    assert [i.nodeid for i in first[:2]] == [SLOWEST[0], SLOWEST[2]]
    assert second[0].nodeid == SLOWEST[1]
    others = [i for i in out if i.nodeid not in SLOWEST]
    assert others == [i for i in items if i.nodeid not in SLOWEST]
    assert slowest_first(items[:1], workers=3) == items[:1]
