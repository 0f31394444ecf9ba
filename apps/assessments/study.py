"""The pre/post study protocol around the quiz: a separate, voluntary demographics form, and the
retention rule for raw data.

Demographics are stored against the participant ID only, for a student who took the quiz with
research consent; no audit row names who filled them in (that row would be the link the
protocol forbids). Retention: the raw imported quiz files and the participant-ID map are deleted
`Course.study_retention_days` after the course's last scheduled day (lecture, event, milestone or
deadline), by a scheduled task that warns the instructors 30 days before; de-identified
responses, scores, demographics and the report stay. The deletion is audited (counts only).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from apps.assessments.models import (
    EXPERIENCE,
    PRIOR,
    PROGRAMS,
    Assessment,
    Demographics,
    IdentityLink,
    Response,
    ResponseImport,
)
from apps.assessments.services import get, participant_for
from apps.calendar.models import Assignment, CourseEvent, Lecture, Milestone
from apps.core import outbox
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_student
from apps.core.services import audit_record

WARN_BEFORE = dt.timedelta(days=30)
SMALL_CELL = 5  # counts under this are shown as "<5" so nobody is singled out
FIELDS = {"program": PROGRAMS, "experience": EXPERIENCE, "prior_course": PRIOR}
LABELS = {
    "program": "programme",
    "experience": "ML-systems experience",
    "prior_course": "took a systems or ML course before",
}


def course_end(course: Course) -> dt.datetime | None:
    """The course's last scheduled instant: its latest lecture, event, milestone or deadline."""
    ends = [
        Lecture.objects.filter(course=course).aggregate(m=Max("starts_at"))["m"],
        CourseEvent.objects.filter(course=course).aggregate(m=Max("starts_at"))["m"],
        Milestone.objects.filter(course=course).aggregate(m=Max("due_at"))["m"],
        Assignment.objects.filter(course=course).aggregate(m=Max("due_at"))["m"],
    ]
    found = [e for e in ends if e is not None]
    return max(found) if found else None


def purge_at(course: Course) -> dt.datetime | None:
    end = course_end(course)
    return end + dt.timedelta(days=course.study_retention_days) if end else None


def consented(a: Assessment, user: User) -> bool:
    p = participant_for(a, user, create=False)
    return (
        p is not None
        and Response.objects.filter(participant=p, opted_out=False)
        .exclude(status=Response.Status.STARTED)
        .exists()
    )


def demographics_submit(
    *, actor: User, course: Course, assessment_id: int, data: dict[str, Any]
) -> Demographics:
    """Record (or replace) the student's demographics under their participant ID. Every field
    may be left at "prefer not to say"."""
    if not is_student(actor, course):
        raise NotAllowed("Only the course's students fill in the study's demographics form.")
    a = get(course, assessment_id)
    if a.identities_destroyed_at:
        raise Conflict("The study's participant-ID map is gone; the demographics form is closed.")
    participant = participant_for(a, actor, create=False)
    if participant is None or not consented(a, actor):
        raise Conflict(
            "The demographics form is for students who took the quiz and agreed to the research "
            "use; nothing is collected otherwise."
        )
    values = {}
    for name, choices in FIELDS.items():
        value = str(data.get(name) or "")
        if value not in {v for v, _ in choices}:
            raise DomainError(
                f"Choose one of the listed answers (or “Prefer not to say”) for {name}.",
                field=name,
            )
        values[name] = value
    with transaction.atomic():
        row, _ = Demographics.objects.update_or_create(participant=participant, defaults=values)
    return row


def demographics_summary(a: Assessment) -> list[dict[str, Any]]:
    """Per question, the count of each answer; small counts shown as "<5"."""
    rows = list(Demographics.objects.filter(participant__assessment=a).values(*FIELDS))
    out = []
    for name, choices in FIELDS.items():
        counts = Counter(r[name] for r in rows)
        out.append(
            {
                "field": LABELS[name],
                "answers": [
                    (
                        label,
                        "<5" if 0 < counts.get(value, 0) < SMALL_CELL else counts.get(value, 0),
                    )
                    for value, label in choices
                ],
            }
        )
    return out


def _instructors(course: Course) -> list[str]:
    return list(
        Membership.objects.filter(course=course, role=Role.INSTRUCTOR, is_active=True).values_list(
            "user__email", flat=True
        )
    )


def purge(a: Assessment, now: dt.datetime) -> dict[str, int]:
    """Delete the assessment's raw imports and participant-ID map, once; audited with counts."""
    with transaction.atomic():
        a = Assessment.objects.select_for_update().get(pk=a.pk)
        if a.raw_purged_at is not None:
            return {"imports": 0, "links": 0}
        imports, _ = ResponseImport.objects.filter(assessment=a).delete()
        links, _ = IdentityLink.objects.filter(participant__assessment=a).delete()
        a.raw_purged_at = now
        a.identities_destroyed_at = a.identities_destroyed_at or now
        a.save(update_fields=["raw_purged_at", "identities_destroyed_at"])
        counts = {"imports": imports, "links": links}
        audit_record(
            actor=None,
            action="assessments.retention_purge",
            course=a.course,
            obj=a,
            after={**counts, "retention_days": a.course.study_retention_days},
        )
    return counts


def _warn(a: Assessment, when: dt.datetime, now: dt.datetime) -> bool:
    with transaction.atomic():
        a = Assessment.objects.select_for_update().select_related("course").get(pk=a.pk)
        if a.retention_warned_at is not None:
            return False
        a.retention_warned_at = now
        a.save(update_fields=["retention_warned_at"])
        to = _instructors(a.course)
        audit_record(
            actor=None,
            action="assessments.retention_warned",
            course=a.course,
            obj=a,
            after={"deletes_at": when.isoformat(), "told": len(to)},
        )
        local = when.astimezone(a.course.tz)
        mail = outbox.Mail(
            to,
            f"[{a.course.code}] {a.title}: raw study data is deleted on {local:%Y-%m-%d}",
            f"The course's retention rule ({a.course.study_retention_days} days after the course "
            f"ended) deletes the raw imported quiz files and the participant-ID map of "
            f"“{a.title}” on {local:%Y-%m-%d %H:%M} ({a.course.timezone}).\n\n"
            "De-identified responses, scores, demographics and the report stay. Download what "
            f"the study still needs before then:\n{settings.SITE_URL}/c/{a.course.code}/"
            f"assessments/{a.pk}/\n",
        )
        # Recorded with the warned mark, sent once it commits: a refused send is retried.
        outbox.post("assessments.retention_warned", [mail], course_id=a.course_id, run=f"{a.pk}")
    return True


def retention_sweep(now: dt.datetime) -> list[str]:
    """Warn 30 days before, delete at the date; what it did, one line per assessment."""
    out = []
    for a in Assessment.objects.filter(raw_purged_at__isnull=True).select_related("course"):
        when = purge_at(a.course)
        if when is None:
            continue
        if now >= when:
            counts = purge(a, now)
            out.append(
                f"{a.course.code} {a.title}: deleted {counts['imports']} raw import(s) and "
                f"{counts['links']} ID link(s)"
            )
        elif now >= when - WARN_BEFORE and _warn(a, when, now):
            out.append(f"{a.course.code} {a.title}: instructors warned (deletes {when:%Y-%m-%d})")
    return out
