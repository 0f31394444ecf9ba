"""GPU-hour quotas per group (the course file's `compute.gpu_hour_quota`, or staff's own for a
group): what each group used this period, a warning at the threshold, and the node stopped at
the quota.

Used GPU-hours come from the same accounting as the budget (`usage.running_intervals`: the
cloud's RUNNING intervals of each node, intersected with the allocations, times the node's GPU
count), counted from the period's start (Monday 00:00 course time, or the whole term). A group
is e-mailed once per period and quota when it passes `warn_pct` (and sees it on Today), and
once when its node is stopped; raising its quota arms both again. The stop is a cloud job with
its audit row (`autostop`); while the group is over its quota it cannot start the node again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.compute.models import Allocation, Node
from apps.compute.quota_version import quota_version
from apps.compute.recipients import member_emails, staff_emails
from apps.compute.usage import autostop
from apps.compute.usage import rules as usage_rules
from apps.compute.usage.metering import StatusRow, _overlap, intervals_of, status_rows
from apps.compute.usage_models import GroupQuota, QuotaNotice, UsagePolicy
from apps.core.errors import DomainError, NotFound
from apps.core.models import Course, User
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.core.versions import cached
from apps.groups.models import Group


def policy_of(course: Course) -> UsagePolicy:
    """The course's usage policy (an unsaved default, no quota and no shutdown, without one)."""
    return UsagePolicy.objects.filter(course=course).first() or UsagePolicy(course=course)


AllocRow = tuple[int, int, int, dt.datetime, dt.datetime | None]  # group, node, GPUs, from, to


def _hours_of(
    rows: list[AllocRow], changes: list[StatusRow], since: dt.datetime, until: dt.datetime
) -> dict[int, float]:
    """GPU-hours each group's held nodes ran in [since, until), from its allocations and the
    nodes' status changes (rows outside the span are left out here)."""
    rows = [r for r in rows if r[3] < until and (r[4] is None or r[4] > since)]
    runs = intervals_of(changes, sorted({r[1] for r in rows}), until)
    out: dict[int, float] = {}
    for group_id, node_id, gpus, started, ended in rows:
        span = (max(started, since), min(ended or until, until))
        secs = sum(_overlap(span, iv) for iv in runs.get(node_id, []))
        out[group_id] = out.get(group_id, 0.0) + secs / 3600 * gpus
    return out


def _alloc_rows(
    course: Course, group_ids: list[int] | None, since: dt.datetime | None = None
) -> list[AllocRow]:
    allocs = Allocation.objects.filter(course=course)
    if since is not None:
        allocs = allocs.exclude(ended_at__lte=since)
    if group_ids is not None:
        allocs = allocs.filter(group_id__in=group_ids)
    return list(
        allocs.values_list("group_id", "node_id", "node__gpu_count", "started_at", "ended_at")
    )


def gpu_hours_used(
    course: Course, since: dt.datetime, until: dt.datetime, group_ids: list[int] | None = None
) -> dict[int, float]:
    """GPU-hours each group's held nodes ran in [since, until): two queries, whatever the size."""
    rows = [r for r in _alloc_rows(course, group_ids, since) if r[3] < until]
    return _hours_of(rows, status_rows(sorted({r[1] for r in rows}), until), since, until)


@dataclass(frozen=True)
class Standing:
    group_id: int
    group: str
    used: float
    quota: int
    standing: str  # none, ok, warn, over (usage_rules.quota_standing)
    own_quota: bool  # staff set this group's quota
    period_start: dt.datetime
    resets_at: dt.datetime | None
    node: Node | None
    period: str = "week"

    @property
    def pct(self) -> int:
        return min(round(self.used / self.quota * 100), 999) if self.quota else 0

    @property
    def left(self) -> float:
        return max(self.quota - self.used, 0.0)


@dataclass(frozen=True)
class _Inputs:
    """What the standings are computed from, all but the clock: the policy, the groups, their
    own quotas, their allocations, their nodes' status changes and the node each holds now."""

    policy: UsagePolicy
    groups: list[tuple[int, str]]
    own: dict[int, int]
    allocs: list[AllocRow]
    changes: list[StatusRow]
    nodes: dict[int, Node]


def _inputs(
    course: Course,
    group_ids: list[int] | None,
    since: dt.datetime | None,
    until: dt.datetime | None,
) -> _Inputs:
    policy = policy_of(course)
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    if group_ids is not None:
        groups = groups.filter(pk__in=group_ids)
    pairs = list(groups.values_list("pk", "name"))
    ids = [pk for pk, _ in pairs]
    own = dict(GroupQuota.objects.filter(group_id__in=ids).values_list("group_id", "gpu_hours"))
    allocs = [r for r in _alloc_rows(course, ids, since) if until is None or r[3] < until]
    nodes = {
        a.group_id: a.node
        for a in Allocation.objects.filter(group_id__in=ids, ended_at__isnull=True).select_related(
            "node"
        )
    }
    changes = status_rows(sorted({r[1] for r in allocs}), until)
    return _Inputs(policy, pairs, own, allocs, changes, nodes)


def _standings_of(course: Course, got: _Inputs, now: dt.datetime) -> list[Standing]:
    policy = got.policy
    start = usage_rules.period_start(now, policy.period, course.tz)
    end = usage_rules.period_end(start, policy.period, course.tz)
    used = _hours_of(got.allocs, got.changes, start, now)
    out = []
    for pk, name in got.groups:
        quota = got.own.get(pk, policy.gpu_hours)
        hours = round(used.get(pk, 0.0), 1)
        out.append(
            Standing(
                group_id=pk,
                group=name,
                used=hours,
                quota=quota,
                standing=usage_rules.quota_standing(hours, quota, policy.warn_pct),
                own_quota=pk in got.own,
                period_start=start,
                resets_at=end,
                node=got.nodes.get(pk),
                period=policy.period,
            )
        )
    return out


def standings(
    course: Course, now: dt.datetime | None = None, group_ids: list[int] | None = None
) -> list[Standing]:
    """Every live group's (or those of `group_ids`) GPU-hours this period against its quota,
    in name order, read now from the database (the staff's usage page and the enforcer): a
    fixed number of queries."""
    now = now or timezone.now()
    policy = policy_of(course)
    start = usage_rules.period_start(now, policy.period, course.tz)
    return _standings_of(course, _inputs(course, group_ids, start, now), now)


def standing_of(course: Course, group_id: int, now: dt.datetime | None = None) -> Standing | None:
    """One group's standing, as `standings` computes it, for the pages a student reads (Today,
    the node page, my usage). Its inputs — the policy, the group, its own quota, its allocations
    and their nodes' status changes — are cached per group under the course's quota version,
    which every write to those rows drops (`quota_cache`); the hours are then computed at `now`
    from them, so a node still running counts up to the second and a new period starts on
    time without any write. `node` is the node the group held when the entry was built; read
    its cloud fields from the database where they matter."""
    now = now or timezone.now()
    got = cached(
        quota_version(course.pk),
        f"group-{group_id}",
        lambda: _inputs(course, [group_id], None, None),
        course,
    )
    found = _standings_of(course, got, now)
    return found[0] if found else None


def start_refusal(course: Course, group_id: int | None, now: dt.datetime | None = None) -> str:
    """Why the group may not start its node now (its quota is used), or "". Read fresh from
    the database, never from the cache: this guards a cloud start, and a start refused or let
    through on a cached standing would be a wrong action rather than a stale number."""
    if group_id is None:
        return ""
    found = standings(course, now, [group_id])
    s = found[0] if found else None
    if s is None or s.standing != "over":
        return ""
    when = (
        f"; it resets {format_instant(s.resets_at, course.timezone)}"
        if s.resets_at
        else " for the term"
    )
    return (
        f"{s.group} has used its {s.quota} GPU-hours ({s.used:g} used){when}. Ask the course "
        "staff to raise the group's quota to start the node before then."
    )


def _period_words(policy: UsagePolicy) -> str:
    return "this week" if policy.period == UsagePolicy.Period.WEEK else "this term"


def quota_enforce(course: Course, now: dt.datetime | None = None) -> list[str]:
    """Warn each group at the threshold (once per period and quota) and stop the running node
    of each group over its quota (a cloud job with its audit row; the group and staff e-mailed
    once per period and quota). Returns a line per thing done."""
    from apps.core import outbox

    now = now or timezone.now()
    policy = policy_of(course)
    done: list[str] = []
    url = f"{settings.SITE_URL}/c/{course.code}/node/"
    for s in standings(course, now):
        if s.standing not in ("warn", "over"):
            continue
        resets = (
            f"It resets {format_instant(s.resets_at, course.timezone)}."
            if s.resets_at
            else "It is the group's quota for the whole term."
        )
        if _notice(course, s, QuotaNotice.Kind.WARN, now):
            outbox.post(
                "compute.quota_warn",
                [
                    outbox.Mail(
                        member_emails(s.group_id),
                        f"[{course.code}] {s.group}: {s.pct}% of your GPU-hours used",
                        f"{s.group} has used {s.used:g} of its {s.quota} GPU-hours "
                        f"{_period_words(policy)} ({s.pct}%). {resets}\n\nAt {s.quota} "
                        "courseops stops the group's node. Stop it yourself when nothing runs; "
                        f"see the numbers on your node page: {url}\n",
                    )
                ],
                course_id=course.pk,
                run=f"quota-warn-{s.group_id}-{s.period_start:%Y%m%d}-{s.quota}",
            )
            done.append(f"{s.group}: warned at {s.used:g}/{s.quota}")
        if s.standing != "over" or s.node is None:
            continue
        with transaction.atomic():
            node = Node.objects.select_for_update().get(pk=s.node.pk)
            if node.cloud_status != "RUNNING" or autostop.stop_pending(node.pk):
                continue
            detail = f"{s.group} used {s.used:g} of its {s.quota} GPU-hours {_period_words(policy)}"
            autostop.auto_stop(
                course=course, node=node, group_id=s.group_id, cause="quota", detail=detail, now=now
            )
            if _notice(course, s, QuotaNotice.Kind.STOP, now):
                outbox.post(
                    "compute.quota_stop",
                    [
                        outbox.Mail(
                            member_emails(s.group_id) + staff_emails(course.pk),
                            f"[{course.code}] {s.group}: GPU-hour quota used, {node.name} stopped",
                            f"{detail}, so courseops is stopping {node.name} now (local SSD data "
                            f"is kept). {resets}\n\nStaff can raise the group's quota on the "
                            f"usage page: {settings.SITE_URL}/c/{course.code}/compute/usage/\n"
                            f"The group's node page: {url}\n",
                        )
                    ],
                    course_id=course.pk,
                    run=f"quota-stop-{s.group_id}-{s.period_start:%Y%m%d}-{s.quota}",
                )
            done.append(f"{s.group}: {node.name} stopped at {s.used:g}/{s.quota}")
    return done


def _notice(course: Course, s: Standing, kind: str, now: dt.datetime) -> bool:
    """Claim the (group, period, kind, quota) notice; False when it was claimed before."""
    try:
        with transaction.atomic():
            QuotaNotice.objects.create(
                course=course,
                group_id=s.group_id,
                period_start=s.period_start,
                kind=kind,
                quota=s.quota,
                used=s.used,
                at=now,
            )
    except IntegrityError:
        return False
    return True


def group_quota_set(
    *, actor: User, course: Course, group_id: int, gpu_hours: int | None, note: str
) -> GroupQuota | None:
    """Staff give one group its own GPU-hour quota (`gpu_hours`), or give it back the course
    file's (None). One transaction: the row and its audit row (before and after)."""
    from apps.compute.board.services import require_staff

    require_staff(actor, course)
    note = note.strip()
    if not note:
        raise DomainError("Say why (the group sees the quota, staff see the reason).", field="note")
    group = Group.objects.filter(course=course, pk=group_id, dissolved_at__isnull=True).first()
    if group is None:
        raise NotFound("No such group in this course.")
    default = policy_of(course).gpu_hours
    with transaction.atomic():
        Group.objects.select_for_update().filter(pk=group.pk).first()
        old = GroupQuota.objects.filter(group=group).first()
        before = {"gpu_hours": old.gpu_hours if old else default, "own": old is not None}
        row: GroupQuota | None
        if gpu_hours is None:
            GroupQuota.objects.filter(group=group).delete()
            row = None
        else:
            row, _ = GroupQuota.objects.update_or_create(
                group=group,
                defaults={
                    "course": course,
                    "gpu_hours": gpu_hours,
                    "note": note[:300],
                    "set_by": actor,
                    "set_at": timezone.now(),
                },
            )
        audit_record(
            actor=actor,
            action="compute.quota_set",
            course=course,
            obj=group,
            before=before,
            after={
                "gpu_hours": gpu_hours if gpu_hours is not None else default,
                "own": row is not None,
            },
            note=note,
        )
    return row
