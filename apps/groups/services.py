"""Writes for groups. Each service is one transaction that locks what it reads, writes an audit
event, and raises a DomainError (NotAllowed 403, Conflict 409, DomainError 400) with a message
a student or staff member can act on.

Size limit: every service that adds a member locks the target group row (`SELECT … FOR UPDATE`)
before counting, so concurrent joins serialise on the group and it never exceeds the maximum.
"One active group per student per course" is a partial unique index; its IntegrityError becomes
a Conflict.
"""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.lifecycle import GroupDissolved, GroupMerged, MemberLeft, StudentDropped, publish
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff, role_in
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.core.transactions import in_callers_transaction
from apps.groups import rules
from apps.groups.models import Group, GroupMembership

FORMATION_MILESTONE = "group-formation"


def formation_deadline(course: Course) -> dt.datetime | None:
    return (
        Milestone.objects.filter(course=course, key=FORMATION_MILESTONE)
        .values_list("due_at", flat=True)
        .first()
    )


def _require_open(course: Course) -> None:
    deadline = formation_deadline(course)
    if not rules.formation_open(now=timezone.now(), deadline=deadline):
        assert deadline is not None  # noqa: S101 - formation_open is True without a deadline
        raise NotAllowed(
            f"Groups were final at {format_instant(deadline, course.timezone)}; "
            "ask the course staff to change your group."
        )


def _require_student(actor: User, course: Course) -> None:
    if role_in(actor, course) != Role.STUDENT:
        raise NotAllowed(
            "Only students of this course form groups themselves; staff use the formation board."
        )


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may do this.")


def _current(course: Course, user: User) -> GroupMembership | None:
    return (
        GroupMembership.objects.select_for_update()
        .filter(course=course, user=user, left_at__isnull=True)
        .select_related("group")
        .first()
    )


def _size(group: Group) -> int:
    return group.memberships.filter(left_at__isnull=True).count()


def _add(group: Group, user: User) -> GroupMembership:
    """Add under the caller's lock on `group`; the unique index catches a second group."""
    if not rules.can_join(size=_size(group), max_size=group.course.group_max_size):
        raise Conflict(f"{group.name} is full ({group.course.group_max_size} members).")
    try:
        with transaction.atomic():
            return GroupMembership.objects.create(group=group, course=group.course, user=user)
    except IntegrityError:
        raise Conflict(f"{user} is already in a group in this course.") from None


def _leave(membership: GroupMembership) -> None:
    membership.left_at = timezone.now()
    membership.save(update_fields=["left_at"])


def _check_name(course: Course, name: str, *, exclude: int | None = None) -> str:
    cleaned = rules.clean_group_name(name)
    if not cleaned:
        raise DomainError("Give the group a name.", field="name")
    if len(cleaned) > 80:
        raise DomainError("Group names are at most 80 characters.", field="name")
    taken = Group.objects.filter(course=course, name__iexact=cleaned, dissolved_at__isnull=True)
    if exclude is not None:
        taken = taken.exclude(pk=exclude)
    if taken.exists():
        raise Conflict(f"There is already a group called {cleaned!r}.", field="name")
    return cleaned


def _lock_group(group_id: int, course: Course) -> Group:
    group = (
        Group.objects.select_for_update()
        .filter(pk=group_id, course=course, dissolved_at__isnull=True)
        .first()
    )
    if group is None:
        raise NotFound("No such group in this course.")
    return group


# ------------------------------------------------------------------ students


def group_create(*, actor: User, course: Course, name: str) -> Group:
    """A student creates a group and is its first member. Until the formation deadline."""
    _require_student(actor, course)
    _require_open(course)
    with transaction.atomic():
        if _current(course, actor) is not None:
            raise Conflict("You are already in a group; leave it first.")
        cleaned = _check_name(course, name)
        try:
            with transaction.atomic():
                group = Group.objects.create(course=course, name=cleaned)
        except IntegrityError:
            raise Conflict(f"There is already a group called {cleaned!r}.", field="name") from None
        group = Group.objects.select_for_update().get(pk=group.pk)
        _add(group, actor)
        audit_record(
            actor=actor,
            action="group.created",
            course=course,
            obj=group,
            after={"name": group.name, "members": [actor.email]},
        )
    return group


def group_join(*, actor: User, course: Course, code: str) -> Group:
    """A student joins with a join code.

    Locks the group; refuses when it is full or after the formation deadline.
    """
    _require_student(actor, course)
    _require_open(course)
    normalized = rules.normalize_join_code(code)
    with transaction.atomic():
        group = (
            Group.objects.select_for_update()
            .filter(course=course, join_code=normalized, dissolved_at__isnull=True)
            .first()
        )
        if group is None:
            raise DomainError(
                "No group in this course has that join code; check it with your group.",
                field="code",
            )
        current = _current(course, actor)
        if current is not None:
            if current.group_id == group.pk:
                raise Conflict(f"You are already in {group.name}.")
            raise Conflict(
                f"You are in {current.group.name}; leave it before joining another group."
            )
        _add(group, actor)
        audit_record(
            actor=actor,
            action="group.joined",
            course=course,
            obj=group,
            after={"member": actor.email},
        )
    return group


def _publish_dissolved(
    course: Course, actor: User | None, group: Group, member_ids: list[int]
) -> None:
    """Tell every app that the group ended (in the caller's transaction)."""
    assert group.dissolved_at is not None  # noqa: S101
    publish(
        GroupDissolved(
            course=course,
            actor=actor,
            at=group.dissolved_at,
            group_id=group.pk,
            group_name=group.name,
            member_ids=tuple(member_ids),
        )
    )


def _publish_left(
    course: Course, actor: User | None, m: GroupMembership, to_group_id: int | None = None
) -> None:
    assert m.left_at is not None  # noqa: S101
    publish(
        MemberLeft(
            course=course,
            actor=actor,
            at=m.left_at,
            group_id=m.group_id,
            user_id=m.user_id,
            to_group_id=to_group_id,
        )
    )


@in_callers_transaction
def on_student_dropped(event: StudentDropped) -> None:
    """A dropped student leaves their group at once; a group left empty ends (every app is told),
    as when its last member leaves on their own."""
    m = (
        GroupMembership.objects.select_for_update()
        .filter(course=event.course, user_id=event.user_id, left_at__isnull=True)
        .first()
    )
    if m is None:
        return
    group = Group.objects.select_for_update().get(pk=m.group_id)
    _leave(m)
    audit_record(
        actor=event.actor,
        action="group.member_removed",
        course=event.course,
        obj=group,
        before={"member": m.user_id},
        after=event.caused_by(),
    )
    _publish_left(event.course, event.actor, m)
    if _size(group) == 0 and group.dissolved_at is None:
        group.dissolved_at = m.left_at
        group.save(update_fields=["dissolved_at"])
        _publish_dissolved(event.course, event.actor, group, [m.user_id])


def group_leave(*, actor: User, course: Course) -> Group:
    """A student leaves their group. An emptied group is removed (it has no history to keep)."""
    _require_student(actor, course)
    _require_open(course)
    with transaction.atomic():
        current = _current(course, actor)
        if current is None:
            raise DomainError("You are not in a group.")
        group = Group.objects.select_for_update().get(pk=current.group_id)
        _leave(current)
        if _size(group) == 0:
            group.dissolved_at = timezone.now()
            group.save(update_fields=["dissolved_at"])
        audit_record(
            actor=actor,
            action="group.left",
            course=course,
            obj=group,
            before={"member": actor.email},
            after={"dissolved": group.dissolved_at is not None},
        )
        _publish_left(course, actor, current)
        if group.dissolved_at is not None:
            _publish_dissolved(course, actor, group, [actor.pk])
    return group


def group_rename(*, actor: User, group: Group, name: str) -> Group:
    """A member renames their own group until the deadline; staff may rename any time."""
    course = group.course
    staff = is_staff(actor, course)
    if not staff:
        _require_student(actor, course)
        _require_open(course)
    with transaction.atomic():
        locked = _lock_group(group.pk, course)
        if not staff and not locked.memberships.filter(user=actor, left_at__isnull=True).exists():
            raise NotAllowed("You can only rename your own group.")
        old = locked.name
        locked.name = _check_name(course, name, exclude=locked.pk)
        try:
            with transaction.atomic():
                locked.save(update_fields=["name"])
        except IntegrityError:
            raise Conflict(
                f"There is already a group called {locked.name!r}.", field="name"
            ) from None
        audit_record(
            actor=actor,
            action="group.renamed",
            course=course,
            obj=locked,
            before={"name": old},
            after={"name": locked.name},
        )
    return locked


# ------------------------------------------------------------------ staff


def _student(course: Course, user_id: int) -> User:
    m = (
        Membership.objects.filter(course=course, user_id=user_id, role=Role.STUDENT, is_active=True)
        .select_related("user")
        .first()
    )
    if m is None:
        raise DomainError("That person is not an active student of this course.", field="user")
    return m.user


def group_staff_create(*, actor: User, course: Course, name: str) -> Group:
    _require_staff(actor, course)
    with transaction.atomic():
        cleaned = _check_name(course, name)
        try:
            with transaction.atomic():
                group = Group.objects.create(course=course, name=cleaned)
        except IntegrityError:
            raise Conflict(f"There is already a group called {cleaned!r}.", field="name") from None
        audit_record(
            actor=actor, action="group.created", course=course, obj=group, after={"name": cleaned}
        )
    return group


def member_move(*, actor: User, course: Course, user_id: int, group_id: int) -> Group:
    """Staff put a student into a group (from no group or from another). Any time; audited."""
    _require_staff(actor, course)
    student = _student(course, user_id)
    with transaction.atomic():
        # Lock in id order so two moves between the same groups cannot deadlock.
        current = _current(course, student)
        ids = sorted({group_id} | ({current.group_id} if current else set()))
        locked = {
            g.pk: g
            for g in Group.objects.select_for_update()
            .filter(pk__in=ids, course=course, dissolved_at__isnull=True)
            .order_by("pk")
        }
        if group_id not in locked:
            raise NotFound("No such group in this course.", field="group")
        target = locked[group_id]
        if current is not None and current.group_id == target.pk:
            raise Conflict(f"{student} is already in {target.name}.")
        if current is not None:
            _leave(current)
            _publish_left(course, actor, current, to_group_id=target.pk)
        _add(target, student)
        audit_record(
            actor=actor,
            action="group.member_moved",
            course=course,
            obj=target,
            before={"group": current.group.name if current else None},
            after={"group": target.name, "member": student.email},
        )
    return target


def member_remove(*, actor: User, course: Course, user_id: int) -> None:
    """Staff take a student out of their group (they become ungrouped)."""
    _require_staff(actor, course)
    student = _student(course, user_id)
    with transaction.atomic():
        current = _current(course, student)
        if current is None:
            raise DomainError(f"{student} is not in a group.")
        Group.objects.select_for_update().get(pk=current.group_id)
        _leave(current)
        _publish_left(course, actor, current)
        audit_record(
            actor=actor,
            action="group.member_removed",
            course=course,
            obj=current.group,
            before={"member": student.email},
        )


def group_merge(*, actor: User, course: Course, source_id: int, target_id: int) -> Group:
    """Staff move every member of `source` into `target`, all or nothing; `source` ends empty."""
    _require_staff(actor, course)
    if source_id == target_id:
        raise DomainError("Choose two different groups to merge.")
    with transaction.atomic():
        live = Group.objects.select_for_update().filter(course=course, dissolved_at__isnull=True)
        locked = {g.pk: g for g in live.filter(pk__in=[source_id, target_id]).order_by("pk")}
        if len(locked) != 2:
            raise NotFound("No such group in this course.")
        source, target = locked[source_id], locked[target_id]
        moving = list(source.memberships.filter(left_at__isnull=True).select_related("user"))
        total = _size(target) + len(moving)
        if total > course.group_max_size:
            raise Conflict(
                f"Merging would make {target.name} {total} strong; the maximum is "
                f"{course.group_max_size}."
            )
        for m in moving:
            _leave(m)
            GroupMembership.objects.create(group=target, course=course, user=m.user)
        source.dissolved_at = timezone.now()
        source.save(update_fields=["dissolved_at"])
        audit_record(
            actor=actor,
            action="group.merged",
            course=course,
            obj=target,
            before={"source": source.name},
            after={"moved": [m.user.email for m in moving]},
        )
        publish(
            GroupMerged(
                course=course,
                actor=actor,
                at=source.dissolved_at,
                source_id=source.pk,
                target_id=target.pk,
                source_name=source.name,
                target_name=target.name,
                member_ids=tuple(m.user_id for m in moving),
            )
        )
    return target


def group_dissolve(*, actor: User, course: Course, group_id: int) -> int:
    """Staff dissolve a group: every member becomes ungrouped. Returns how many were released."""
    _require_staff(actor, course)
    with transaction.atomic():
        group = _lock_group(group_id, course)
        members = list(group.memberships.filter(left_at__isnull=True).select_related("user"))
        for m in members:
            _leave(m)
        group.dissolved_at = timezone.now()
        group.save(update_fields=["dissolved_at"])
        audit_record(
            actor=actor,
            action="group.dissolved",
            course=course,
            obj=group,
            before={"name": group.name, "members": [m.user.email for m in members]},
        )
        _publish_dissolved(course, actor, group, [m.user_id for m in members])
    return len(members)
