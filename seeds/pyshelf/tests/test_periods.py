import pytest

from pyshelf import Period, gaps, merge, parse_period, split_weeks, total_days


def test_period_length_and_containment():
    p = Period(10, 17)
    assert len(p) == 7
    assert p.contains(10) and p.contains(16)
    assert not p.contains(17)


def test_period_rejects_end_before_start():
    with pytest.raises(ValueError, match="ends before it starts"):
        Period(5, 4)


def test_touching_periods_do_not_overlap():
    assert not Period(0, 5).overlaps(Period(5, 9))
    assert not Period(5, 9).overlaps(Period(0, 5))
    assert Period(0, 5).overlaps(Period(4, 9))


def test_intersection():
    assert Period(0, 10).intersection(Period(5, 20)) == Period(5, 10)
    assert Period(0, 5).intersection(Period(5, 8)) is None


def test_merge_joins_overlapping_and_touching_periods():
    periods = [Period(10, 12), Period(0, 3), Period(2, 5), Period(5, 7), Period(11, 11)]
    assert merge(periods) == [Period(0, 7), Period(10, 12)]


def test_gaps_within_window():
    booked = [Period(3, 5), Period(8, 12), Period(0, 1), Period(-9, -6), Period(15, 20)]
    assert gaps(booked, Period(0, 12)) == [Period(1, 3), Period(5, 8)]
    assert gaps([Period(-4, 1)], Period(0, 10)) == [Period(1, 10)]


def test_total_days_counts_overlap_once():
    assert total_days([Period(0, 5), Period(3, 8), Period(20, 21)]) == 9


def test_split_weeks_on_mondays():
    assert split_weeks(Period(5, 20), week_start=0) == [Period(5, 7), Period(7, 14), Period(14, 20)]


def test_split_weeks_rejects_bad_week_start():
    with pytest.raises(ValueError, match="between 0 and 6"):
        split_weeks(Period(0, 7), week_start=7)


@pytest.mark.parametrize(
    "text, expected",
    [("10..17", Period(10, 18)), ("10 + 7", Period(10, 17))],
)
def test_parse_period(text, expected):
    assert parse_period(text) == expected


@pytest.mark.parametrize("text", ["10-17"])
def test_parse_period_rejects_garbage(text):
    with pytest.raises(ValueError, match="bad period"):
        parse_period(text)
