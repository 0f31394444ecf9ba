"""Write a validated course file into the database: one transaction, upserts by natural key.

Re-running with the same file changes nothing; a changed file updates in place (a moved
deadline moves, never duplicates). Records that are in the database but no longer in the file
are reported, not deleted: later apps point at lectures and assignments, and their history
matters more than a tidy table.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from django.db import models, transaction

from apps.autograder.models import GradingPolicy
from apps.calendar.models import Assignment, CourseEvent, Lecture, Milestone, RecessDay
from apps.compute.models import ComputePolicy, Node, StaticIP, UsagePolicy
from apps.core.coursefile import CourseFile, CourseFileError
from apps.core.models import Course, GradingComponent, User
from apps.core.services import audit_record
from apps.labs.labfile import shipped as shipped_labs
from apps.labs.models import CourseLab
from apps.milestones.models import GroupMilestone
from apps.setup.liveterm import moved, shift_found, term_label


@dataclass
class LoadReport:
    course: Course
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    not_in_file: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)

    def tally(self, kind: str, outcome: str) -> None:
        self.counts.setdefault(kind, Counter())[outcome] += 1

    def lines(self) -> list[str]:
        out = []
        for kind, c in self.counts.items():
            total = sum(c.values())
            out.append(
                f"{kind:<18} {total:>3}  (created {c['created']}, updated {c['updated']}, "
                f"unchanged {c['unchanged']})"
            )
        out += [
            f"{kind}: no longer in the file and never used (removed): {', '.join(names)}"
            for kind, names in self.removed.items()
            if names
        ]
        out += [
            f"{kind}: in the database but not in the file (kept): {', '.join(names)}"
            for kind, names in self.not_in_file.items()
            if names
        ]
        return out

    @property
    def changed(self) -> bool:
        changed = any(c["created"] or c["updated"] for c in self.counts.values())
        return changed or any(self.removed.values())


def _upsert(
    model: type[models.Model], lookup: dict[str, Any], values: dict[str, Any]
) -> tuple[Any, str]:
    obj = model._default_manager.select_for_update().filter(**lookup).first()
    if obj is None:
        return model._default_manager.create(**lookup, **values), "created"
    changed = [k for k, v in values.items() if getattr(obj, k) != v]
    if not changed:
        return obj, "unchanged"
    for k in changed:
        setattr(obj, k, values[k])
    if hasattr(obj, "revision"):  # a changed date or title: subscribed calendars update it
        obj.revision += 1
        changed.append("revision")
    obj.save(update_fields=changed)
    return obj, "updated"


def course_load(*, cf: CourseFile, actor: User | None = None) -> LoadReport:
    """Create or update the course and everything the file lists, all or nothing.

    Locks the course row (and each row it updates) so two loads of the same course serialise.
    Writes one audit event `course.loaded` with the counts when anything changed.
    """
    with transaction.atomic():
        m, p = cf.course, cf.policy
        # A demo database moved its calendar (apps.setup.liveterm): the file's dates are read in
        # that frame, so reloading an unchanged file changes nothing and a changed date moves by
        # what the file changed, never back to the real term under the demo's people.
        existing = Course.objects.filter(code=m.code).first()
        shift = 0
        if existing is not None:
            shift = existing.calendar_shift_days or shift_found(
                existing, min((lec.date for lec in cf.lectures), default=None)
            )
        tz = ZoneInfo(m.timezone)

        def at(instant: dt.datetime) -> dt.datetime:
            return moved(instant, shift, tz)

        course, outcome = _upsert(
            Course,
            {"code": m.code},
            {
                "number": m.number,
                "title": m.title,
                "term": term_label(m.term, shift),
                "calendar_shift_days": shift,
                "timezone": m.timezone,
                "location": m.location,
                "lecture_start": m.lecture_time.start,
                "lecture_end": m.lecture_time.end,
                "due_time": p.due_time,
                "release_time": p.release_time,
                "group_min_size": p.group_size.min,
                "group_max_size": p.group_size.max,
                "slack_days_allowance": p.slack_days.allowance,
                "slack_days_max_per_assignment": p.slack_days.max_per_assignment,
                "slack_grace_minutes": p.slack_days.grace_minutes,
                "scribe_lectures_per_student": p.scribing.lectures_per_student,
                "scribe_min_gap_days": p.scribing.min_gap_days,
                "scribe_notes_due_days": p.scribing.notes_due_days,
                "peer_reviews_per_group": p.peer_review.reviews_per_group,
                "checkoff_cutoff_hours": p.checkoffs.cutoff_hours,
                "sharing_window_max_hours": p.sharing_windows.max_hours,
                "reminder_hours": list(p.reminders.hours_before),
                "study_retention_days": p.study.retention_days,
                "extension_auto_max_days": p.extensions.auto_approve_max_days,
                "extension_auto_per_student": p.extensions.auto_approve_per_student,
                "extension_close_hours": p.extensions.closes_hours_after_deadline,
                "extension_max_days": p.extensions.max_days,
                "extension_auto_per_group": p.relief.auto_approve_per_group,
                "extension_auto_per_deadline": p.relief.auto_approve_per_deadline,
                "extension_group_closes_own": p.relief.group_request_closes_own,
                "relief_cap_days": p.relief.cap_days,
                "relief_slack_with_extension": p.relief.slack_with_extension,
                "relief_accommodations_count": p.relief.accommodations_count,
                "relief_over_cap": p.relief.over_cap,
                "letter_cutoffs": [[c.letter, float(c.min)] for c in cf.letter_grades],
                "instructors": ", ".join(m.instructors),
                "links": [{"label": link.label, "url": link.url} for link in m.links],
            },
        )
        report = LoadReport(course=course)
        report.tally("course", outcome)
        _, o = _upsert(
            GradingPolicy,
            {"course": course},
            {
                "reveal_names": p.anonymous_grading.reveal_names,
                "head_tas": [e.strip().lower() for e in p.anonymous_grading.head_tas],
                "practice_solution_after": p.practice.solution_after_wrong_checks,
            },
        )
        report.tally("grading policy", o)

        for lec in cf.lectures:
            starts, ends = cf.lecture_span(lec.date)
            _, o = _upsert(
                Lecture,
                {"course": course, "number": lec.number},
                {
                    "title": lec.title,
                    "starts_at": at(starts),
                    "ends_at": at(ends),
                    "is_guest": lec.guest,
                    "part": lec.part,
                    "notes": lec.notes,
                },
            )
            report.tally("lectures", o)
        for r in cf.recess:
            _, o = _upsert(
                RecessDay,
                {"course": course, "date": r.date + dt.timedelta(days=shift)},
                {"note": r.note},
            )
            report.tally("recess days", o)
        for a in cf.assignments:
            _, o = _upsert(
                Assignment,
                {"course": course, "code": a.code},
                {
                    "title": a.title,
                    "release_at": at(cf.instant(a.release, release=True)),
                    "due_at": at(cf.instant(a.due)),
                    "accepts_slack": a.accepts_slack,
                },
            )
            report.tally("assignments", o)
        for ms in cf.milestones:
            _, o = _upsert(
                Milestone,
                {"course": course, "key": ms.key},
                {
                    "name": ms.name,
                    "due_at": at(cf.instant(ms.due)),
                    "notes": ms.notes,
                    "tracked": ms.tracked,
                    # left out of the file: the board's setting stays as it is
                    **(
                        {}
                        if ms.sources_required is None
                        else {"sources_required": ms.sources_required}
                    ),
                },
            )
            report.tally("milestones", o)
        for ev in cf.events:
            starts, ends = cf.event_span(ev)
            _, o = _upsert(
                CourseEvent,
                {"course": course, "key": ev.key},
                {
                    "name": ev.name,
                    "kind": ev.kind,
                    "starts_at": at(starts),
                    "ends_at": at(ends),
                    "all_day": not isinstance(ev.start, dt.datetime),
                    "location": ev.location,
                    "notes": ev.notes,
                },
            )
            report.tally("events", o)
        for key, oh, starts, ends in cf.office_hour_spans():
            _, o = _upsert(
                CourseEvent,
                {"course": course, "key": key},
                {
                    "name": f"Office hours{f' ({oh.who})' if oh.who else ''}",
                    "kind": "office-hours",
                    "starts_at": at(starts),
                    "ends_at": at(ends),
                    "all_day": False,
                    "location": oh.location,
                    "notes": "",
                },
            )
            report.tally("events", o)

        known = shipped_labs()
        unknown = [lab.key for lab in cf.labs if lab.key not in known]
        if unknown:
            raise CourseFileError(
                [f"labs: no lab {k!r} in courses/labs/ (have: {', '.join(known)})" for k in unknown]
            )
        for lab in cf.labs:
            _, o = _upsert(
                CourseLab,
                {"course": course, "lab_key": lab.key},
                {
                    "opens_at": at(cf.instant(lab.opens, release=True)),
                    "closes_at": at(cf.instant(lab.closes)),
                },
            )
            report.tally("labs", o)

        position = 0
        for g in cf.grading:
            position += 1
            parent, o = _upsert(
                GradingComponent,
                {"course": course, "key": g.key},
                {
                    "name": g.name,
                    "weight": g.weight,
                    "satisfactory_threshold": g.satisfactory_threshold,
                    "source": g.source,
                    "blend": {k: float(v) for k, v in g.blend.items()},
                    "parent": None,
                    "position": position,
                },
            )
            report.tally("grading components", o)
            for part in g.parts:
                position += 1
                _, o = _upsert(
                    GradingComponent,
                    {"course": course, "key": part.key},
                    {
                        "name": part.name,
                        "weight": part.weight,
                        "satisfactory_threshold": part.satisfactory_threshold,
                        "source": part.source,
                        "blend": {k: float(v) for k, v in part.blend.items()},
                        "parent": parent,
                        "position": position,
                    },
                )
                report.tally("grading components", o)

        if cf.compute is not None:
            d = cf.compute.node_defaults
            for n in cf.compute.nodes:
                _, o = _upsert(
                    Node,
                    {"course": course, "name": n.name},
                    {
                        "gcp_project": cf.compute.gcp_project,
                        "zone": n.zone,
                        "internal_ip": n.internal_ip,
                        "machine_type": n.machine_type or d.machine_type,
                        "gpu_model": n.gpu_model or d.gpu_model,
                        "gpu_count": n.gpu_count or d.gpu_count,
                    },
                )
                report.tally("nodes", o)
            for s in cf.compute.static_ips:
                _, o = _upsert(
                    StaticIP,
                    {"course": course, "address": s.address},
                    {"resource_name": s.resource_name, "region": s.region},
                )
                report.tally("static IPs", o)
            _, o = _upsert(
                ComputePolicy,
                {"course": course},
                {
                    "allocate_at_formation": cf.compute.allocate_at_formation,
                    "formation_milestone": cf.compute.formation_milestone,
                    "windows_need_run_record": cf.compute.windows_need_run_record,
                    "gcp_project": cf.compute.gcp_project,
                    "price_per_node_hour": cf.compute.price_per_node_hour,
                    "credit_budget": cf.compute.credit_budget,
                    "idle_below_pct": cf.compute.idle_below_pct,
                    "idle_hours": cf.compute.idle_hours,
                    "idle_stop": cf.compute.idle_stop,
                    "groups_may_power": cf.compute.groups_may_power,
                },
            )
            report.tally("compute policy", o)
            quota, shutdown = cf.compute.gpu_hour_quota, cf.compute.scheduled_shutdown
            _, o = _upsert(
                UsagePolicy,
                {"course": course},
                {
                    "gpu_hours": quota.gpu_hours,
                    "period": quota.per,
                    "warn_pct": quota.warn_at_pct,
                    "shutdown_at": dt.time.fromisoformat(shutdown.at) if shutdown else None,
                    "opt_out_approval": shutdown.opt_out if shutdown else "staff",
                },
            )
            report.tally("usage policy", o)

        # A milestone dropped from the file that no group has recorded anything for goes (the
        # syllabus's releases and sessions became events); one with records stays, reported.
        dropped = Milestone.objects.filter(course=course).exclude(
            key__in=[ms.key for ms in cf.milestones]
        )
        unused = dropped.exclude(pk__in=GroupMilestone.objects.values("milestone_id"))
        report.removed = {"milestones": sorted(unused.values_list("key", flat=True))}
        if report.removed["milestones"]:
            unused.delete()
        report.not_in_file = {
            "lectures": [
                f"L{n}"
                for n in Lecture.objects.filter(course=course)
                .exclude(number__in=[lec.number for lec in cf.lectures])
                .values_list("number", flat=True)
            ],
            "assignments": list(
                Assignment.objects.filter(course=course)
                .exclude(code__in=[a.code for a in cf.assignments])
                .values_list("code", flat=True)
            ),
            "milestones": list(
                Milestone.objects.filter(course=course)
                .exclude(key__in=[ms.key for ms in cf.milestones])
                .values_list("key", flat=True)
            ),
        }
        if report.changed:
            audit_record(
                actor=actor,
                action="course.loaded",
                course=course,
                obj=course,
                after={k: dict(c) for k, c in report.counts.items()},
            )
    return report
