"""The dry run's check against finished runs: most / estimate, and no ratio where the estimate is no time."""

from benchmarks.dry_run_check import over_estimate


def test_the_ratio_is_most_over_estimate_and_none_for_an_estimate_of_no_time():
    assert over_estimate(12.0, 10.0) == 1.2 and over_estimate(3.0, 4.0) == 0.75
    assert over_estimate(0.4, 0.0) is None  # a tiny run's estimate rounds to 0 s: no division, no ratio
