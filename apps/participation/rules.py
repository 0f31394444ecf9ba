"""The participation score, pure: what share of the lectures held so far a student attended, and
how many other contributions (Ed posts and answers, comments on notes and slides, check-ins)
they made, against a target.

score = ATTENDANCE_WEIGHT × attended / held + (100 − ATTENDANCE_WEIGHT) × min(1, others / TARGET)

The syllabus does not split attendance from participation; these two numbers are the course's
policy and named on the page. With no lecture held yet there is no score (incomplete).
"""

from __future__ import annotations

ATTENDANCE_WEIGHT = 70.0
CONTRIBUTIONS_TARGET = 5


def participation_score(attended: int, held: int, contributions: int) -> float | None:
    if held <= 0:
        return None
    share = min(attended, held) / held
    return ATTENDANCE_WEIGHT * share + (100 - ATTENDANCE_WEIGHT) * min(
        1.0, contributions / CONTRIBUTIONS_TARGET
    )
