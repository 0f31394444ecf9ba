"""Roster import: preview (what would change, every bad row) and commit (all or nothing).

The commit locks the course row so two imports of the same course serialise, re-computes the
preview against the database as it is then, and refuses if any row is bad. People new to
courseops get an account with no password (they set one with "Forgot your password?").
Students missing from the file are dropped: their membership becomes inactive and they leave
their group; nothing is deleted. Staff memberships are never dropped by an import, but a row
may give a TA or instructor the student role: `StaffRemoved` tells the apps holding work given
to them (the preview lists what each will do, `staff_leaving`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from apps.core.csvfile import refuse_unreadable
from apps.core.errors import Conflict, NotAllowed, NotFound
from apps.core.lifecycle import (
    StaffRemoved,
    StudentDropped,
    StudentsEnrolled,
    consequences,
    publish,
)
from apps.core.models import STAFF_ROLES, Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.roster.models import RosterImport
from apps.roster.rules import MAX_BYTES, ParsedRoster, Problem, RosterRow, parse_roster


@dataclass
class Change:
    row: int | None
    email: str
    name: str
    role: str
    what: str  # human summary of the change


@dataclass
class Preview:
    parsed: ParsedRoster
    added: list[Change] = field(default_factory=list)
    updated: list[Change] = field(default_factory=list)
    unchanged: int = 0
    dropped: list[Change] = field(default_factory=list)

    @property
    def problems(self) -> list[Problem]:
        return self.parsed.problems

    @property
    def ok(self) -> bool:
        return not self.parsed.problems

    @property
    def changes(self) -> bool:
        return bool(self.added or self.updated or self.dropped)

    def summary(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "dropped": len(self.dropped),
            "problems": len(self.problems),
        }


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may import the roster.")


def _plan(
    course: Course, parsed: ParsedRoster
) -> tuple[Preview, dict[str, User], dict[int, Membership]]:
    preview = Preview(parsed)
    rows = parsed.rows
    emails = [r.email for r in rows]
    users = {u.email: u for u in User.objects.filter(email__in=emails)}
    sids = [r.sid for r in rows if r.sid]
    sid_owner = dict(User.objects.filter(sid__in=sids).values_list("sid", "email"))
    memberships = {
        m.user_id: m for m in Membership.objects.filter(course=course, user__in=users.values())
    }
    sid_column = parsed.columns.get("sid")
    for r in rows:
        owner = sid_owner.get(r.sid) if r.sid else None
        if owner and owner != r.email:
            parsed.problems.append(
                Problem(r.row, sid_column, f"SID {r.sid} belongs to another account ({owner})")
            )
            continue
        user = users.get(r.email)
        m = memberships.get(user.pk) if user else None
        if user is None or m is None:
            preview.added.append(
                Change(
                    r.row,
                    r.email,
                    r.name,
                    r.role,
                    "new to courseops" if user is None else "added to the course",
                )
            )
            continue
        diffs = []
        if not m.is_active:
            diffs.append("re-activated")
        if m.role != r.role:
            diffs.append(f"role {m.role} → {r.role}")
        if r.name and user.full_name != r.name:
            diffs.append(f"name {user.full_name!r} → {r.name!r}")
        if r.sid and user.sid != r.sid:
            diffs.append(f"SID {user.sid or '(none)'} → {r.sid}")
        if diffs:
            preview.updated.append(Change(r.row, r.email, r.name, r.role, "; ".join(diffs)))
        else:
            preview.unchanged += 1
    if any(r.role == Role.STUDENT for r in rows):
        in_file = set(emails)
        active = Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True)
        for m in active.select_related("user").order_by("user__email"):
            if m.user.email not in in_file:
                preview.dropped.append(
                    Change(None, m.user.email, m.user.full_name, m.role, "not in the file: dropped")
                )
    return preview, users, memberships


def staff_leaving(course: Course, preview: Preview) -> list[tuple[Change, list[str]]]:
    """The preview's staff members the file makes students, each with what every app will do
    about the work given to them (`StaffRemoved`'s consequences)."""
    rows = [c for c in preview.updated if c.role not in STAFF_ROLES]
    if not rows:
        return []
    staff = dict(
        Membership.objects.filter(
            course=course,
            role__in=STAFF_ROLES,
            is_active=True,
            user__email__in=[c.email for c in rows],
        ).values_list("user__email", "user_id")
    )
    return [
        (c, consequences(StaffRemoved, course, staff[c.email])) for c in rows if c.email in staff
    ]


def roster_preview(*, course: Course, data: bytes) -> Preview:
    """What committing `data` would do now. Pure read."""
    return _plan(course, parse_roster(data))[0]


def roster_upload(
    *, actor: User, course: Course, filename: str, data: bytes
) -> tuple[RosterImport, Preview]:
    _require_staff(actor, course)
    refuse_unreadable(data, max_bytes=MAX_BYTES)
    preview = roster_preview(course=course, data=data)
    record = RosterImport.objects.create(
        course=course,
        filename=filename[:200] or "roster.csv",
        content=data,
        sha256=hashlib.sha256(data).hexdigest(),
        uploaded_by=actor,
    )
    return record, preview


def roster_commit(*, actor: User, record: RosterImport) -> Preview:
    """Apply an uploaded roster, all or nothing. Raises Conflict if any row is bad or it was
    already committed. Audits one `roster.imported` event with the counts."""
    course = record.course
    _require_staff(actor, course)
    with transaction.atomic():
        Course.objects.select_for_update().get(pk=course.pk)
        record = RosterImport.objects.select_for_update().get(pk=record.pk)
        if record.committed_at is not None:
            raise Conflict("This import was already committed.")
        parsed = parse_roster(bytes(record.content))
        preview, users, memberships = _plan(course, parsed)
        if not preview.ok:
            raise Conflict(
                f"The file has {len(preview.problems)} problem(s); fix them and upload it again. "
                "Nothing was changed."
            )
        by_email = {r.email: r for r in parsed.rows}
        new_rows = [by_email[c.email] for c in preview.added if c.email not in users]
        unusable = make_password(None)
        created = User.objects.bulk_create(
            [User(email=r.email, full_name=r.name, sid=r.sid, password=unusable) for r in new_rows],
            batch_size=1000,
        )
        users.update({u.email: u for u in created})
        Membership.objects.bulk_create(
            [
                Membership(user=users[c.email], course=course, role=by_email[c.email].role)
                for c in preview.added
                if users[c.email].pk not in memberships
            ],
            batch_size=1000,
        )
        changed_users, changed_members = [], []
        demoted: list[tuple[int, str]] = []
        for c in preview.updated:
            r: RosterRow = by_email[c.email]
            user = users[c.email]
            m = memberships[user.pk]
            if m.is_active and m.role in STAFF_ROLES and r.role not in STAFF_ROLES:
                demoted.append((user.pk, m.role))
            if r.name:
                user.full_name = r.name
            if r.sid:
                user.sid = r.sid
            changed_users.append(user)
            m.role, m.is_active = r.role, True
            changed_members.append(m)
        User.objects.bulk_update(changed_users, ["full_name", "sid"], batch_size=1000)
        Membership.objects.bulk_update(changed_members, ["role", "is_active"], batch_size=1000)
        for user_id, was in demoted:  # split shares, slots they run … are handed back
            publish(
                StaffRemoved(
                    course=course,
                    actor=actor,
                    at=timezone.now(),
                    user_id=user_id,
                    role=was,
                    now=Role.STUDENT,
                )
            )
        if preview.dropped:
            gone = [c.email for c in preview.dropped]
            Membership.objects.filter(course=course, user__email__in=gone).update(is_active=False)
            at = timezone.now()  # groups, scribing … react to each drop (they end group places)
            for user_id in User.objects.filter(email__in=gone).values_list("pk", flat=True):
                publish(StudentDropped(course=course, actor=actor, at=at, user_id=user_id))
        enrolled = tuple(
            users[c.email].pk
            for c in [*preview.added, *preview.updated]
            if by_email[c.email].role == Role.STUDENT
        )
        if enrolled:  # slack days and the like open their per-student state now
            publish(
                StudentsEnrolled(course=course, actor=actor, at=timezone.now(), user_ids=enrolled)
            )
        record.committed_at = timezone.now()
        record.committed_by = actor
        record.summary = preview.summary()
        record.save(update_fields=["committed_at", "committed_by", "summary"])
        audit_record(
            actor=actor,
            action="roster.imported",
            course=course,
            obj=record,
            after={**preview.summary(), "dropped_emails": [c.email for c in preview.dropped]},
        )
    return preview


def roster_import_get(*, actor: User, course: Course, import_id: int) -> RosterImport:
    _require_staff(actor, course)
    record = RosterImport.objects.filter(course=course, pk=import_id).first()
    if record is None:
        raise NotFound("No such roster import in this course.")
    return record
