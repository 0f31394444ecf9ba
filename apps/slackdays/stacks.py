"""Reads for a deadline's page: every student's relief stack on one assignment (slack spent,
their own and their group's extensions, accommodation, the effective deadline, the cap left,
staff's override), filtered by group and by how close to the cap, for the staff page, its CSV
and its API twin alike. Four queries whatever the course's size; the stacks are the relief
rule's own (`rules.relief_stack` through `selectors.relief_rows`), so this page, the student's
slack page, feeds and reminders show one deadline."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404

from apps.calendar.cache import course_calendar
from apps.calendar.models import Assignment
from apps.core.models import Course, Membership, Role, User
from apps.core.views_helpers import int_or_none
from apps.groups.models import GroupMembership
from apps.slackdays import rules
from apps.slackdays.selectors import relief_policy, relief_rows

CAP_FILTERS = {
    "": "everyone",
    "over": "past the course's cap (held at it, or staff confirmed more)",
    "near": "2 days or less of relief left (past the cap included)",
}
NEAR_HOURS = 48


@dataclass(frozen=True)
class StackRow:
    student: User
    group: str
    group_id: int | None
    stack: rules.ReliefStack
    course_cap_days: int | None

    def _hours(self, kind: str) -> int:
        return sum(p.hours for p in self.stack.parts if p.kind == kind)

    @property
    def slack_days(self) -> int:
        return self.stack.slack_days

    @property
    def own_hours(self) -> int:
        return self._hours("extension")

    @property
    def group_hours(self) -> int:
        return self._hours("group extension")

    @property
    def accommodation_hours(self) -> int:
        return self._hours("accommodation")

    @property
    def over_course_cap(self) -> bool:
        """More counted relief than the course file's cap (held at it, or confirmed by staff)."""
        cap = self.course_cap_days
        return cap is not None and self.stack.counted_hours > cap * 24

    @property
    def override_days(self) -> int | None:
        """The total staff confirmed past the course's cap on this deadline, or None."""
        cap, mine = self.course_cap_days, self.stack.cap_days
        return mine if cap is not None and mine is not None and mine > cap else None

    @property
    def near_cap(self) -> bool:
        room = self.stack.room_hours
        return room is not None and room <= NEAR_HOURS


def deadline_stack_rows(
    *, course: Course, assignment: Assignment, group_id: int | None = None, cap: str = ""
) -> list[StackRow]:
    """Every active student's relief on `assignment`, ordered by name (4 queries): only one
    group's members with `group_id`; with `cap` "over" or "near", only those (CAP_FILTERS)."""
    students = [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        .select_related("user")
        .order_by("user__full_name", "user_id")
    ]
    groups = {
        uid: (gid, name)
        for uid, gid, name in GroupMembership.objects.filter(
            course=course, left_at__isnull=True
        ).values_list("user_id", "group_id", "group__name")
    }
    if group_id is not None:
        students = [s for s in students if groups.get(s.pk, (None, ""))[0] == group_id]
    known = {s.pk: groups.get(s.pk, (None, ""))[0] for s in students}
    ext, acc, slack, _ = relief_rows(course, set(known), known)
    policy = relief_policy(course)
    rows = []
    for s in students:
        stack = rules.relief_stack(
            assignment.due_at,
            tz=course.timezone,
            policy=policy,
            parts=[rules.ReliefPart(kind="slack", hours=24)] * slack[s.pk][assignment.pk]
            + ext[s.pk][assignment.pk]
            + acc[s.pk],
        )
        gid, name = groups.get(s.pk, (None, ""))
        rows.append(StackRow(s, name, gid, stack, policy.cap_days))
    if cap == "over":
        rows = [r for r in rows if r.over_course_cap]
    elif cap == "near":
        rows = [r for r in rows if r.near_cap]
    return rows


def course_assignment(course: Course, assignment_id: int) -> Assignment:
    """The course's assignment (from its cached calendar), or 404."""
    for a in course_calendar(course).assignments:
        if a.pk == assignment_id:
            return a
    raise Http404("No such assignment in this course.")


def stack_filters(params: dict[str, str]) -> tuple[int | None, str]:
    """(group id or None, cap filter) from a query string; unknown values mean no filter."""
    cap = params.get("cap", "")
    return int_or_none(params.get("group")), cap if cap in CAP_FILTERS else ""
