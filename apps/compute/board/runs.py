"""Run records: what a group ran, so it can be run again (code version, configuration and its
hash, seed, artifacts, nodes, window). A student records for their own group; staff read and
search every group's. A course may require a record naming a sharing window before the window's
access files are given out (`ComputePolicy.windows_need_run_record`)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from apps.compute.board.selectors import group_id_of
from apps.compute.models import MAX_CONFIG_BYTES, ComputePolicy, RunRecord, SharingWindow
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_member, is_staff
from apps.core.services import audit_record
from apps.groups.models import Group

COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
SEED_MAX = 2**63 - 1


def _windows_of(course: Course, group_id: int) -> QuerySet[SharingWindow]:
    """Windows the group requested or lends a node to."""
    return SharingWindow.objects.filter(course=course).filter(
        Q(requester_id=group_id) | Q(nodes__owner_id=group_id)
    )


def run_record_create(
    *, actor: User, course: Course, data: dict[str, Any], group_id: int | None = None
) -> RunRecord:
    """Record a run for the actor's group (staff: for `group_id`). Every field is checked and
    named on error; the configuration's SHA-256 is stored with it."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course record runs.")
    staff = is_staff(actor, course)
    gid = group_id if staff else group_id_of(user=actor, course=course)
    if gid is None:
        raise DomainError(
            "Join a group first: runs are recorded for a group."
            if not staff
            else "Choose the group the run belongs to.",
            field="group",
        )
    group = Group.objects.filter(course=course, pk=gid).first()
    if group is None:
        raise NotFound("No such group in this course.", field="group")
    title = str(data.get("title") or "").strip()
    if not title:
        raise DomainError("Give the run a name, e.g. “2-node FSDP, bs 512”.", field="title")
    repository = str(data.get("repository") or "").strip()
    if not repository:
        raise DomainError("Say where the code lives (a repository URL).", field="repository")
    commit = str(data.get("commit") or "").strip().lower()
    if not COMMIT.match(commit):
        raise DomainError(
            "The commit is 7 to 40 hexadecimal characters (git rev-parse HEAD).", field="commit"
        )
    config = str(data.get("config_text") or "")
    if len(config.encode()) > MAX_CONFIG_BYTES:
        raise DomainError(
            "The configuration is at most 256 KB; keep the file that sets the run.",
            field="config_text",
        )
    seed = data.get("seed")
    if seed in ("", None):
        seed = None
    else:
        try:
            seed = int(str(seed).strip())
        except ValueError:
            raise DomainError("The seed is a whole number.", field="seed") from None
        if not -SEED_MAX <= seed <= SEED_MAX:
            raise DomainError("That seed does not fit in 64 bits.", field="seed")
    window_id = data.get("window") or None
    window = None
    if window_id is not None:
        try:
            window = _windows_of(course, group.pk).filter(pk=int(window_id)).distinct().first()
        except (TypeError, ValueError):
            window = None
        if window is None:
            raise DomainError("That is not a window of your group.", field="window")
    fields = {
        "title": title[:120],
        "repository": repository[:300],
        "commit": commit,
        "config_text": config,
        "config_sha256": hashlib.sha256(config.encode()).hexdigest() if config else "",
        "seed": seed,
        "artifacts": str(data.get("artifacts") or "").strip()[:500],
        "nodes": str(data.get("nodes") or "").strip()[:300],
        "notes": str(data.get("notes") or "").strip()[:5000],
    }
    with transaction.atomic():
        record = RunRecord.objects.create(
            course=course, group=group, created_by=actor, window=window, **fields
        )
        audit_record(
            actor=actor,
            action="run.recorded",
            course=course,
            obj=record,
            after={"group": group.name, "title": record.title, "commit": commit},
        )
    return record


def run_records(
    *, user: User, course: Course, q: str = "", group_id: int | None = None
) -> QuerySet[RunRecord]:
    """Newest first: staff every group's (searchable by title, repository, commit, notes,
    group), a student their group's."""
    qs = RunRecord.objects.filter(course=course).select_related("group", "created_by", "window")
    if not is_staff(user, course):
        gid = group_id_of(user=user, course=course)
        return qs.filter(group_id=gid) if gid else qs.none()
    if group_id:
        qs = qs.filter(group_id=group_id)
    q = q.strip()
    if q:
        qs = qs.filter(
            Q(title__icontains=q)
            | Q(repository__icontains=q)
            | Q(commit__startswith=q.lower())
            | Q(notes__icontains=q)
            | Q(group__name__icontains=q)
        )
    return qs


def window_needs_record(window: SharingWindow) -> bool:
    """True when the course requires a run record naming this window and there is none yet."""
    policy = ComputePolicy.objects.filter(course_id=window.course_id).first()
    if policy is None or not policy.windows_need_run_record:
        return False
    return not RunRecord.objects.filter(window=window).exists()


EXPORT_HEADER = [
    "id",
    "group",
    "title",
    "repository",
    "commit",
    "config_sha256",
    "seed",
    "artifacts",
    "nodes",
    "window",
    "recorded_by",
    "recorded_at",
    "notes",
]


def export_rows(records: QuerySet[RunRecord]) -> list[list[Any]]:
    return [
        [
            r.pk,
            r.group.name,
            r.title,
            r.repository,
            r.commit,
            r.config_sha256,
            "" if r.seed is None else r.seed,
            r.artifacts,
            r.nodes,
            r.window_id or "",
            r.created_by.email,
            r.created_at.isoformat(),
            r.notes,
        ]
        for r in records
    ]
