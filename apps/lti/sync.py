"""The LMS's roster in, and grades out, over the LTI services (pylti1p3 signs the tool's token
request with its key and pages through the platform's answers).

Roster (Names and Role Provisioning): every linked LMS course's active members become one roster
file in the CSV import's own shape, previewed and committed by the roster import — added,
updated and dropped exactly like an uploaded class list, all or nothing, drops through the
lifecycle events. If any link cannot send its roster, nothing is previewed (a missing section
must never read as dropped students).

Grades (Assignment and Grade Services): each top-level gradebook component and each released
question set is a grade column, found by its `resourceId` before one is created (pushing twice
never makes a second column); every student's score goes to every linked LMS course, only when it
changed since the LMS last accepted it. A push in which anyone was not sent is recorded as failed
with each person's name, e-mail and the LMS's reason; pushing again retries exactly those.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

import requests
from django.db import transaction
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.contrib.django.lti1p3_tool_config import DjangoDbToolConf
from pylti1p3.exception import LtiException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector

from apps.core.emails import EmailRefused, first_link_email
from apps.core.errors import Conflict, NotAllowed
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.lti.models import LtiIdentity, LtiLink, LtiScoreSent, LtiSeat, LtiSync
from apps.lti.roles import course_role
from apps.roster.models import RosterImport
from apps.roster.services import Preview, roster_upload

AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
]
RANK = {Role.INSTRUCTOR: 3, Role.TA: 2, Role.STUDENT: 1}
SERVICE_ERRORS = (LtiException, requests.RequestException, ValueError, KeyError)


def _connector(link: LtiLink) -> ServiceConnector:
    registration = DjangoDbToolConf().find_registration_by_params(
        link.tool.issuer, link.tool.client_id
    )
    return ServiceConnector(registration)


def _why(exc: Exception) -> str:
    """The LMS's own words when it gave any (Canvas: errors.message), else the failure's kind."""
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            body = response.json()
        except ValueError:
            body = {}
        errors = body.get("errors") if isinstance(body, dict) else None
        if isinstance(errors, dict) and errors.get("message"):
            return str(errors["message"])
        if isinstance(body, dict) and body.get("error"):
            return str(body.get("detail") or body["error"])
        return f"the LMS answered {response.status_code}"
    return f"the LMS could not be reached ({type(exc).__name__})"


def _staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs sync with the LMS.")


def _finish(sync: LtiSync, failures: list[dict[str, str]], summary: dict[str, Any]) -> LtiSync:
    sync.status = LtiSync.Status.FAILED if failures else LtiSync.Status.DONE
    sync.failures, sync.summary, sync.finished_at = failures, summary, timezone.now()
    sync.save(update_fields=["status", "failures", "summary", "finished_at"])
    return sync


# ---------------------------------------------------------------- roster in


def roster_sync(*, actor: User, course: Course) -> tuple[RosterImport, Preview]:
    """Fetch every linked LMS course's members and preview them as a roster import (the roster
    page's preview then commits it, all or nothing). Raises Conflict, changing nothing, when a
    link has no roster service yet or its LMS does not answer."""
    _staff(actor, course)
    links = list(LtiLink.objects.filter(course=course).select_related("tool").order_by("pk"))
    if not links:
        raise Conflict("No LMS course is linked to this course; launch courseops from it first.")
    people: dict[str, tuple[str, str]] = {}  # e-mail → (name, role)
    for link in links:
        sync = LtiSync.objects.create(link=link, kind="roster", started_by=actor)
        title = link.context_title or link.context_id
        if not link.nrps_url:
            _finish(sync, [{"name": title, "email": "", "why": "no roster service yet"}], {})
            raise Conflict(
                f"{title} has not shared its roster service yet: launch courseops from it once. "
                "Nothing was changed."
            )
        try:
            members = NamesRolesProvisioningService(
                _connector(link), {"context_memberships_url": link.nrps_url}
            ).get_members()
        except SERVICE_ERRORS as exc:
            _finish(sync, [{"name": title, "email": "", "why": _why(exc)}], {})
            raise Conflict(
                f"{title}: the LMS did not send its roster ({_why(exc)}). Nothing was changed."
            ) from None
        kept = 0
        refused: list[dict[str, str]] = []
        seated: set[str] = set()
        for m in members:
            role = course_role(m.get("roles") or [])
            try:
                email = first_link_email(str(m.get("email") or "")) if m.get("email") else ""
            except EmailRefused as exc:  # a look-alike address: nobody is added by it
                refused.append({"name": str(m.get("name") or ""), "why": str(exc)})
                continue
            if m.get("status", "Active") != "Active" or role is None or not email:
                continue
            kept += 1
            seated.add(str(m["user_id"]))
            LtiIdentity.objects.update_or_create(
                tool=link.tool, sub=str(m["user_id"]), defaults={"email": email}
            )
            name = str(m.get("name") or "")
            if email not in people or RANK[Role(role)] > RANK[Role(people[email][1])]:
                people[email] = (name, role)
        LtiSeat.objects.filter(link=link).exclude(sub__in=seated).delete()
        LtiSeat.objects.bulk_create(
            [LtiSeat(link=link, sub=sub) for sub in seated], ignore_conflicts=True
        )
        _finish(sync, [], {"members": len(members), "kept": kept, "refused": refused})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "email", "sid", "role"])
    for email, (name, role) in sorted(people.items()):
        writer.writerow([name, email, "", role])
    titles = ", ".join(link.context_title or link.context_id for link in links)
    return roster_upload(
        actor=actor,
        course=course,
        filename=f"LMS roster: {titles}"[:200],
        data=out.getvalue().encode(),
    )


# ---------------------------------------------------------------- grades out


@dataclass
class Column:
    resource_id: str
    label: str
    maximum: float
    scores: dict[str, tuple[float, str]] = field(default_factory=dict)  # e-mail → (score, note)


def columns_of(course: Course) -> list[Column]:
    """Every top-level gradebook component (in percent) and every released question set (in
    points), with each active student's score where there is one."""
    from apps.autograder.models import QuestionSet
    from apps.autograder.selectors import released_run, totals_rows
    from apps.gradebook.selectors import components_of, gradebook_rows

    out = []
    tops = [c for c in components_of(course) if c.parent_id is None]
    rows = gradebook_rows(course)
    for c in tops:
        col = Column(f"courseops:{course.code}:component:{c.key}", c.name, 100.0)
        for r in rows:
            pct = r.percents.get(c.key)
            if pct is not None:
                col.scores[r.student.email.lower()] = (round(float(pct), 4), "")
        out.append(col)
    now = timezone.now()
    for qs in QuestionSet.objects.filter(course=course, released_at__lte=now).order_by("key"):
        run = released_run(qs)
        if run is None:
            continue
        totals = list(totals_rows(run))
        maximum = max((float(t["max"]) for t in totals), default=0.0)
        if not maximum:
            continue
        col = Column(f"courseops:{course.code}:set:{qs.key}", qs.title, maximum)
        for t in totals:
            col.scores[str(t["student__email"]).lower()] = (
                round(float(t["score"]), 4),
                f"{float(t['score']):g} of {float(t['max']):g} points in courseops",
            )
        out.append(col)
    return out


def _lineitem(ags: AssignmentsGradesService, col: Column) -> LineItem:
    wanted = (
        LineItem()
        .set_resource_id(col.resource_id)
        .set_tag("courseops")
        .set_label(col.label)
        .set_score_maximum(col.maximum)
    )
    return ags.find_or_create_lineitem(wanted, find_by="resource_id")


def grades_push(*, actor: User, course: Course) -> list[LtiSync]:
    """Send every changed score to every linked LMS course; one sync record per link."""
    _staff(actor, course)
    links = list(LtiLink.objects.filter(course=course).select_related("tool").order_by("pk"))
    if not links:
        raise Conflict("No LMS course is linked to this course; launch courseops from it first.")
    columns = columns_of(course)
    names = dict(
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).values_list(
            "user__email", "user__full_name"
        )
    )
    names = {e.lower(): n for e, n in names.items()}
    seats: dict[int, set[str]] = {}
    for link_id, seat in LtiSeat.objects.filter(link__in=links).values_list("link_id", "sub"):
        seats.setdefault(link_id, set()).add(seat)
    seated_emails = set(
        LtiIdentity.objects.filter(
            tool__in={link.tool_id for link in links}, sub__in=set().union(*seats.values())
        ).values_list("email", flat=True)
    )
    done = []
    for number, link in enumerate(links):
        sync = LtiSync.objects.create(link=link, kind="grades", started_by=actor)
        title = link.context_title or link.context_id
        if not link.lineitems_url:
            done.append(
                _finish(sync, [{"name": title, "email": "", "why": "no grade service yet"}], {})
            )
            continue
        ags = AssignmentsGradesService(
            _connector(link),
            {"scope": AGS_SCOPES, "lineitems": link.lineitems_url},  # type: ignore[typeddict-item]
        )
        subs = {
            email: sub
            for sub, email in LtiIdentity.objects.filter(
                tool=link.tool, sub__in=seats.get(link.pk, set())
            ).values_list("sub", "email")
        }
        sent = {
            (s.lineitem, s.sub): (s.score, s.maximum, s.comment)
            for s in LtiScoreSent.objects.filter(link=link)
        }
        failures: list[dict[str, str]] = []
        counts = {"columns": 0, "sent": 0, "unchanged": 0}
        for col in columns:
            try:
                item = _lineitem(ags, col)
            except SERVICE_ERRORS as exc:
                failures.append({"name": col.label, "email": "", "why": _why(exc)})
                continue
            counts["columns"] += 1
            item_id = str(item.get_id())
            for email, (score, note) in sorted(col.scores.items()):
                who = names.get(email, email)
                sub = subs.get(email)
                if sub is None:
                    if email not in seated_emails and number == 0:  # said once, on the first
                        failures.append(
                            {
                                "name": who,
                                "email": email,
                                "why": "not a student in any linked LMS course",
                            }
                        )
                    continue  # another section's student: that link sends it
                if sent.get((item_id, sub)) == (score, col.maximum, note):
                    counts["unchanged"] += 1
                    continue
                grade = (
                    Grade()
                    .set_score_given(score)
                    .set_score_maximum(col.maximum)
                    .set_timestamp(timezone.now().isoformat())
                    .set_activity_progress("Completed")
                    .set_grading_progress("FullyGraded")
                    .set_user_id(sub)
                    .set_comment(note)
                )
                try:
                    ags.put_grade(grade, item)
                except SERVICE_ERRORS as exc:
                    failures.append({"name": who, "email": email, "why": _why(exc)})
                    continue
                LtiScoreSent.objects.update_or_create(
                    link=link,
                    lineitem=item_id,
                    sub=sub,
                    defaults={"score": score, "maximum": col.maximum, "comment": note},
                )
                counts["sent"] += 1
        done.append(_finish(sync, failures, {**counts, "failed": len(failures)}))
        with transaction.atomic():
            audit_record(
                actor=actor,
                action="lti.grades_pushed",
                course=course,
                obj=sync,
                after={"lms_course": title, **counts, "failed": len(failures)},
            )
    return done


def roster_sync_all() -> list[str]:
    """The scheduled roster sync, one line per course: committed, or left for staff to look at
    (problems, or more than a fifth of the students dropped), or why it could not run. Runs as
    the instructor who linked the course."""
    from django.conf import settings

    from apps.core import outbox
    from apps.roster.services import roster_commit

    out = []
    course_ids = LtiLink.objects.values_list("course_id", flat=True).distinct()
    for course in Course.objects.filter(pk__in=course_ids).order_by("code"):
        actor = (
            User.objects.filter(
                memberships__course=course,
                memberships__role=Role.INSTRUCTOR,
                memberships__is_active=True,
            )
            .order_by("pk")
            .first()
        )
        if actor is None:
            out.append(f"{course.code}: no active instructor to run it as")
            continue
        try:
            record, plan = roster_sync(actor=actor, course=course)
        except Conflict as exc:
            out.append(f"{course.code}: {exc.message}")
            continue
        students = Membership.objects.filter(
            course=course, role=Role.STUDENT, is_active=True
        ).count()
        # Staff ended those memberships: only staff bring them back (the preview names them).
        reactivates = any("re-activated" in change.what for change in plan.updated)
        if not plan.ok or reactivates or (students and len(plan.dropped) > max(5, students // 5)):
            out.append(f"{course.code}: left for staff ({plan.summary()})")
            staff = list(
                Membership.objects.filter(
                    course=course, role__in=(Role.INSTRUCTOR, Role.TA), is_active=True
                ).values_list("user__email", flat=True)
            )
            if staff:
                mail = outbox.Mail(
                    staff,
                    f"[{course.code}] The LMS roster sync waits for you",
                    f"The scheduled roster sync found {plan.summary()}. Look at it and confirm: "
                    f"{settings.SITE_URL}/c/{course.code}/roster/imports/{record.pk}/\n",
                )
                outbox.post("lti.roster_sync", [mail], course_id=course.pk, run=f"{record.pk}")
            continue
        if plan.changes:
            roster_commit(actor=actor, record=record)
        out.append(f"{course.code}: {plan.summary()}")
    return out
