"""Writes of similarity checks.

`similarity_upload` reads the whole upload first (archive checks, Gradescope metadata, who is
in which group) and stores nothing unless all of it is accepted; then, in one transaction, the
check, its files and the audit row, and the worker's task queued on commit. The same inputs a
second time (same files, starter code and engine) give back the check already made: nothing
is computed again. The threshold is not part of that identity: the same inputs with another
threshold flag the earlier check's stored pairs again at the new one (audited, and the page
says the old and new thresholds), without comparing anything. `similarity_run` is the worker's
part, reporting progress per block of pairs and ending done, or failed with the reason.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.calendar.models import Milestone
from apps.core.errors import DomainError, NotAllowed
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.groups.models import Group, GroupMembership
from apps.integrity import compare, intake
from apps.integrity.archive import ArchiveRefused, read_zip
from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile

LEASE = dt.timedelta(minutes=10)  # a running check's worker holds it this long unrenewed
RENEW_EVERY_S = 30.0  # how often a working worker renews its lease


@dataclass(frozen=True)
class Made:
    check: SimilarityCheck
    reused: bool  # the same inputs were checked before: that check, nothing recomputed
    was_threshold: float | None = None  # reused with another threshold: the one it had
    was_milestone: str | None = None  # reused with another milestone: the one it had ("" none)


@in_callers_transaction
def _reflag(
    actor: User, check: SimilarityCheck, threshold: float, milestone: Milestone | None = None
) -> Made:
    """The same inputs checked before: flag its stored pairs at `threshold` if it differs, and
    show the declared sources of `milestone` if one was chosen and it differs (no milestone
    chosen keeps the check's)."""
    check = SimilarityCheck.objects.select_for_update().get(pk=check.pk)
    was = check.threshold
    was_milestone = check.milestone
    new_threshold = abs(was - threshold) >= 1e-9
    new_milestone = milestone is not None and milestone.pk != check.milestone_id
    if not new_threshold and not new_milestone:
        return Made(check, reused=True)
    fields = ["updated_at"]
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    if new_threshold:
        check.threshold = threshold
        fields.append("threshold")
        if check.status == SimilarityCheck.Status.DONE:
            flagged = SimilarityPair.objects.filter(check_run=check, percent__gte=threshold).count()
            check.stats = {**check.stats, "flagged": flagged}
            fields.append("stats")
        before["threshold"] = was
        after |= {"threshold": threshold, "flagged": check.stats.get("flagged")}
    if new_milestone:
        check.milestone = milestone
        fields.append("milestone")
        before["milestone"] = was_milestone.name if was_milestone else None
        after["milestone"] = milestone.name if milestone else None
    check.save(update_fields=fields)
    audit_record(
        actor=actor,
        action="integrity.similarity_reflagged",
        course=check.course,
        obj=check,
        before=before,
        after=after,
    )
    return Made(
        check,
        reused=True,
        was_threshold=was if new_threshold else None,
        was_milestone=(was_milestone.name if was_milestone else "") if new_milestone else None,
    )


def _groups_of_people(course: Course, people: list[dict[str, str]]) -> set[int]:
    emails = {p["email"].lower() for p in people if p.get("email")}
    sids = {p["sid"] for p in people if p.get("sid")}
    if not emails and not sids:
        return set()
    rows = GroupMembership.objects.filter(
        course=course, left_at__isnull=True, group__dissolved_at__isnull=True
    ).filter(Q(user__email__in=emails) | Q(user__sid__in=sids))
    # emails are stored as typed; compare case-insensitively on the few rows a submission has
    found = set(rows.values_list("group_id", flat=True))
    if not found and emails:
        found = {
            gid
            for gid, email in GroupMembership.objects.filter(
                course=course, left_at__isnull=True, group__dissolved_at__isnull=True
            ).values_list("group_id", "user__email")
            if email.lower() in emails
        }
    return found


def _by_group(
    course: Course, found: intake.Contents
) -> tuple[dict[int, list[tuple[str, intake.SourceFile]]], list[str]]:
    """Each group's files (with the folder each came from), and what was left out, why."""
    warnings = list(found.skipped)
    groups = {g.name.lower(): g.pk for g in Group.objects.filter(course=course, dissolved_at=None)}
    units: dict[int, list[tuple[str, intake.SourceFile]]] = defaultdict(list)
    for key, sub in sorted(found.submissions.items()):
        if not sub.files:
            continue
        if found.source == "gradescope":
            ids = _groups_of_people(course, sub.people)
            who = ", ".join(p["email"] or p["sid"] for p in sub.people) or "no submitters"
            if len(ids) != 1:
                why = "in no group of this course" if not ids else "in different groups"
                warnings.append(f"{key} ({who}): its submitters are {why}; left out")
                continue
            gid = next(iter(ids))
        else:
            gid_or_none = groups.get(key.strip().lower())
            if gid_or_none is None:
                warnings.append(f"{key}: no group of this course has that name; left out")
                continue
            gid = gid_or_none
        units[gid] += [(key, f) for f in sub.files]
    return dict(units), warnings


def inputs_hash(
    units: dict[int, list[tuple[str, intake.SourceFile]]], starter: list[intake.SourceFile]
) -> str:
    spec = {
        "engine": compare.ENGINE,
        "groups": {
            str(g): sorted([f.path, f.kind, f.language, f.sha256] for _, f in files)
            for g, files in units.items()
        },
        "starter": sorted([f.path, f.sha256] for f in starter),
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def similarity_upload(
    *,
    actor: User,
    course: Course,
    title: str,
    data: bytes,
    starter: bytes | None = None,
    milestone_id: int | None = None,
    threshold: float = 0.5,
) -> Made:
    """Staff upload an assignment's submissions (and the starter code); see the module."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs run similarity checks.")
    title = title.strip()
    if not title:
        raise DomainError("Name the check, e.g. “A2 code”.", field="title")
    if not 0.05 <= threshold <= 1:
        raise DomainError("The threshold is a share from 5 % to 100 %.", field="threshold")
    milestone = None
    if milestone_id is not None:
        milestone = Milestone.objects.filter(course=course, pk=milestone_id).first()
        if milestone is None:
            raise DomainError("No such milestone in this course.", field="milestone")
    try:
        found = intake.contents(read_zip(data, name="The submissions archive"))
        starter_files = (
            intake.starter_files(read_zip(starter, name="The starter code archive"))
            if starter
            else []
        )
    except ArchiveRefused as exc:
        raise DomainError(exc.message, field="archive") from exc
    units, warnings = _by_group(course, found)
    if len(units) < 2:
        raise DomainError(
            f"Only {len(units)} group{'s' if len(units) != 1 else ''} of this course found in the "
            "archive; a check compares at least two. "
            + ("; ".join(warnings[:5]) if warnings else "")
            + " Nothing was stored.",
            field="archive",
        )
    digest = inputs_hash(units, starter_files)
    with transaction.atomic():
        same = SimilarityCheck.objects.filter(course=course, inputs_hash=digest).exclude(
            status=SimilarityCheck.Status.FAILED
        )
        earlier = same.first()
        if earlier is not None:
            return _reflag(actor, earlier, threshold, milestone)
        try:
            with transaction.atomic():
                check = SimilarityCheck.objects.create(
                    course=course,
                    title=title[:200],
                    milestone=milestone,
                    source=found.source,
                    threshold=threshold,
                    inputs_hash=digest,
                    warnings=warnings[:500],
                    stats={
                        "groups": len(units),
                        "files": sum(len(v) for v in units.values()),
                        "starter_files": len(starter_files),
                    },
                    created_by=actor,
                )
        except IntegrityError:  # the same upload a moment ago, from another request
            return _reflag(actor, same.get(), threshold, milestone)
        SubmittedFile.objects.bulk_create(
            [
                SubmittedFile(
                    check_run=check,
                    group_id=gid,
                    submission=key[:200],
                    path=f.path[:500],
                    kind=f.kind,
                    language=f.language,
                    sha256=f.sha256,
                    text=f.text,
                )
                for gid, files in units.items()
                for key, f in files
            ]
            + [
                SubmittedFile(
                    check_run=check,
                    group=None,
                    submission="starter",
                    path=f.path[:500],
                    kind="starter",
                    language=f.language,
                    sha256=f.sha256,
                    text=f.text,
                )
                for f in starter_files
            ]
        )
        audit_record(
            actor=actor,
            action="integrity.similarity_queued",
            course=course,
            obj=check,
            after={**check.stats, "source": found.source, "inputs_hash": digest},
        )
        check_id = check.pk

        def unqueued(_exc: BaseException) -> None:
            SimilarityCheck.objects.filter(pk=check_id).update(
                status=SimilarityCheck.Status.FAILED,
                note="The task queue did not answer; nothing was compared. Upload again.",
            )

        enqueue_on_commit(
            lambda: task_named("integrity.similarity").delay(check_id),
            what="the similarity check",
            critical=True,
            on_failure=unqueued,
        )
    return Made(check, reused=False)


def _as_source(f: SubmittedFile) -> intake.SourceFile:
    kind = f.kind
    if kind == "starter":  # the starter's files are compared as what they are
        kind = "report" if f.language == "text" else "code"
    return intake.SourceFile(f.path, kind, f.language, f.text)


def similarity_run(check_id: int) -> str:
    """The worker's part: compare every pair of groups, report progress, store the pairs and
    end done. The worker holds the check on a lease it renews while fingerprinting and
    comparing; if it stops, the sweeper queues the check again (`takeovers` + 1), and a worker
    that was taken over from stores nothing. A second delivery finds the check no longer queued
    and does nothing."""
    now = timezone.now()
    claimed = SimilarityCheck.objects.filter(
        pk=check_id, status=SimilarityCheck.Status.QUEUED
    ).update(
        status=SimilarityCheck.Status.RUNNING,
        progress=0,
        updated_at=now,
        lease_until=now + LEASE,
    )
    if not claimed:
        return "not queued"
    check = SimilarityCheck.objects.select_related("course").get(pk=check_id)
    mine = SimilarityCheck.objects.filter(
        pk=check_id, status=SimilarityCheck.Status.RUNNING, takeovers=check.takeovers
    )
    files = list(SubmittedFile.objects.filter(check_run=check).order_by("group_id", "path", "pk"))
    starter = [_as_source(f) for f in files if f.group_id is None]
    rows: dict[int, list[SubmittedFile]] = defaultdict(list)
    for f in files:
        if f.group_id is not None:
            rows[f.group_id].append(f)
    units = {gid: [_as_source(f) for f in fs] for gid, fs in rows.items()}
    renewed = time.monotonic()

    def heartbeat() -> None:
        nonlocal renewed
        if time.monotonic() - renewed >= RENEW_EVERY_S:
            renewed = time.monotonic()
            now = timezone.now()
            mine.update(lease_until=now + LEASE, updated_at=now)

    def progress(done: int, total: int) -> None:
        nonlocal renewed
        renewed = time.monotonic()
        now = timezone.now()
        mine.update(
            progress=min(99, 100 * done // max(1, total)),
            updated_at=now,
            lease_until=now + LEASE,
        )

    found = compare.compare(units, starter, progress, heartbeat)
    with transaction.atomic():
        live = mine.select_for_update()
        threshold = live.values_list("threshold", flat=True).first()
        if threshold is None:  # taken over or ended by the sweeper meanwhile
            return "ended elsewhere"
        pairs = []
        for gp in found:
            fa, fb = rows[gp.a], rows[gp.b]
            best = gp.files[0]
            pairs.append(
                SimilarityPair(
                    check_run=check,
                    group_a_id=gp.a,
                    group_b_id=gp.b,
                    percent=gp.percent,
                    percent_a=best.percent_a,
                    percent_b=best.percent_b,
                    file_a=fa[best.file_a],
                    file_b=fb[best.file_b],
                    files=[
                        {
                            "file_a": fa[p.file_a].pk,
                            "file_b": fb[p.file_b].pk,
                            "percent_a": p.percent_a,
                            "percent_b": p.percent_b,
                            "slices_a": p.slices_a,
                            "slices_b": p.slices_b,
                        }
                        for p in gp.files[:50]
                    ],
                )
            )
        SimilarityPair.objects.bulk_create(pairs)
        flagged = sum(1 for p in pairs if p.percent >= threshold)  # as set now, maybe re-set
        stats = {**check.stats, "pairs": len(pairs), "flagged": flagged}
        live.update(
            status=SimilarityCheck.Status.DONE,
            progress=100,
            stats=stats,
            finished_at=timezone.now(),
            lease_until=None,
        )
        audit_record(
            actor=check.created_by,
            action="integrity.similarity_done",
            course=check.course,
            obj=check,
            after={"pairs": len(pairs), "flagged": flagged},
        )
    return "done"


def similarity_crashed(check_id: int, reason: str) -> None:
    """End a check failed with the reason, now rather than when the sweeper finds it."""
    SimilarityCheck.objects.filter(pk=check_id, status__in=SimilarityCheck.IN_PROGRESS).update(
        status=SimilarityCheck.Status.FAILED,
        note=f"The comparison stopped: {reason[:500]}. Upload again to retry.",
        updated_at=timezone.now(),
        lease_until=None,
    )


def export_rows(check: SimilarityCheck, pairs: Any) -> Any:
    yield ["rank", "group_a", "group_b", "percent", "percent_a", "percent_b", "file_a", "file_b"]
    for rank, p in enumerate(pairs, 1):
        yield [
            rank,
            p.group_a.name,
            p.group_b.name,
            f"{p.percent * 100:.1f}",
            f"{p.percent_a * 100:.1f}",
            f"{p.percent_b * 100:.1f}",
            p.file_a.path,
            p.file_b.path,
        ]
