from __future__ import annotations

import datetime as dt

from apps.milestones.rules import Status, group_due, is_overdue, milestone_status

DUE = dt.datetime(2026, 2, 13, 7, 59, tzinfo=dt.UTC)
H = dt.timedelta(hours=1)


def test_status_table() -> None:
    cases = [
        (0, None, False, Status.NOT_SUBMITTED),
        (0, DUE - H, False, Status.SUBMITTED),
        (0, DUE, False, Status.SUBMITTED),
        (0, DUE + dt.timedelta(seconds=1), False, Status.LATE),
        (24, DUE + 23 * H, False, Status.SUBMITTED),  # inside the group's extension
        (24, DUE + 25 * H, False, Status.LATE),
        (0, DUE + 100 * H, True, Status.EXCUSED),
        (0, None, True, Status.EXCUSED),
    ]
    for ext, submitted, excused, expected in cases:
        got = milestone_status(
            due=DUE, extension_hours=ext, submitted_at=submitted, excused=excused
        )
        assert got == expected, (ext, submitted, excused)


def test_overdue_only_when_nothing_was_recorded_and_the_group_deadline_passed() -> None:
    assert is_overdue(status=Status.NOT_SUBMITTED, due=DUE, extension_hours=0, now=DUE + H)
    assert not is_overdue(status=Status.NOT_SUBMITTED, due=DUE, extension_hours=2, now=DUE + H)
    assert not is_overdue(status=Status.LATE, due=DUE, extension_hours=0, now=DUE + H)
    assert group_due(DUE, 48) - DUE == 48 * H
