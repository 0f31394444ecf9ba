"""The booking rules as pure functions: cutting a day into slots around a break, the cut-off,
and how a closed slot is explained (in course time)."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.checkoffs import rules

LA = "America/Los_Angeles"


def _local(cuts: list[rules.Cut]) -> list[str]:
    import zoneinfo

    z = zoneinfo.ZoneInfo(LA)
    return [c.starts_at.astimezone(z).strftime("%H:%M") for c in cuts]


def test_an_afternoon_in_15_minute_slots_skips_the_break() -> None:
    cuts = rules.cut_day(
        day=dt.date(2026, 2, 17),
        start=dt.time(13),
        end=dt.time(17),
        minutes=15,
        tz_name=LA,
        break_start=dt.time(14),
        break_end=dt.time(14, 30),
    )
    starts = _local(cuts)
    assert len(cuts) == 14  # 16 quarter hours minus the two in the break
    assert "14:00" not in starts
    assert "14:15" not in starts
    assert starts[:5] == ["13:00", "13:15", "13:30", "13:45", "14:30"]
    assert all(c.ends_at - c.starts_at == dt.timedelta(minutes=15) for c in cuts)
    # stored in UTC: 13:00 PST is 21:00 UTC
    assert cuts[0].starts_at == dt.datetime(2026, 2, 17, 21, 0, tzinfo=dt.UTC)


def test_a_break_that_does_not_align_pushes_the_next_slot_to_its_end() -> None:
    cuts = rules.cut_day(
        day=dt.date(2026, 3, 19),
        start=dt.time(10),
        end=dt.time(13),
        minutes=20,
        tz_name=LA,
        break_start=dt.time(11, 50),
        break_end=dt.time(12, 10),
    )
    assert _local(cuts) == ["10:00", "10:20", "10:40", "11:00", "11:20", "12:10", "12:30"]


def test_a_remainder_shorter_than_a_slot_is_dropped() -> None:
    assert (
        len(
            rules.cut_day(
                day=dt.date(2026, 4, 28),
                start=dt.time(9, 30),
                end=dt.time(11),
                minutes=20,
                tz_name=LA,
            )
        )
        == 4
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"minutes": 3}, "between 5 minutes"),
        ({"end": dt.time(9)}, "end after it starts"),
        ({"break_start": dt.time(12)}, "both ends of the break"),
        ({"break_start": dt.time(12), "break_end": dt.time(11)}, "break must end after"),
    ],
)
def test_bad_ranges_are_refused_with_the_reason(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    args = {
        "day": dt.date(2026, 4, 28),
        "start": dt.time(10),
        "end": dt.time(16),
        "minutes": 15,
        "tz_name": LA,
    } | kwargs
    with pytest.raises(ValueError, match=message):
        rules.cut_day(**args)


def test_the_cutoff_is_two_hours_before_and_the_message_says_when_in_course_time() -> None:
    start = dt.datetime(2026, 4, 28, 16, 30, tzinfo=dt.UTC)  # 9:30 AM PDT
    assert rules.cutoff_at(start, 2) == dt.datetime(2026, 4, 28, 14, 30, tzinfo=dt.UTC)
    assert rules.is_open(start, 2, start - dt.timedelta(hours=2, seconds=1))
    assert not rules.is_open(start, 2, start - dt.timedelta(hours=2))
    text = rules.closed_message(start, "521 Cory Hall", 2, LA, "cancel")
    assert "Tue Apr 28, 2026, 7:30 AM PDT" in text
    assert "the Tue Apr 28, 9:30 AM slot at 521 Cory Hall" in text
    assert text.startswith("Too late to cancel")
