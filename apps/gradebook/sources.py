"""Scores courseops already knows, read from the apps that know them, for a whole course at once.

Each source answers, for the students asked about (None: every student), a `Computed` score in
percent with a one-line explanation, or a score of None while there is nothing to count yet —
"incomplete", never a silent zero. Each costs a fixed number of queries however large the course;
group sources take the student → group map the caller already read.

- autograder: the mean, over the course's assignment question sets that have a complete grading
  pass, of the student's points / points possible in that pass.
- scribing: accepted scribe duties / the duties each student owes (policy, 2), once every duty
  is accepted or past its notes' due date.
- checkoffs: the share of assignment-checkoff sign-ups whose last slot has started in which the
  group the student was in at their slot was marked passed.
- peer-review: the mean criterion score (1–5) the group's report received over every published
  round past its due date, as score / 5.
- milestones: per tracked milestone past its due time, on time or excused 100 %, late 50 %,
  nothing recorded 0 %, averaged.
- impact: the staff's impact score of the student's group, from its evidence items.
- participation: lectures attended and other contributions recorded (participation.rules).
- labs: per lab of the course file whose window has closed, the share of its steps the student
  submitted (prediction locked, instrument run, reflection saved), averaged over those labs.

A score that later events can still move carries `to_come`, naming them: assignments not
released, checkoffs not held, milestones and review rounds not due, lectures not held
(participation; scribe duties not given), labs not closed, impact evidence still open. The
what-if counts such a component as still to come, never as final.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from apps.autograder.models import Grade, GradingRun, QuestionSet
from apps.calendar.models import Lecture, Milestone
from apps.checkoffs.models import Booking, CheckoffSet
from apps.core.models import Course, Membership, Role
from apps.core.timefmt import format_instant
from apps.groups.models import Group, GroupMembership
from apps.impact.models import ImpactScoreGiven
from apps.impact.services import closes_at as impact_closes_at
from apps.labs.labfile import shipped as shipped_labs
from apps.labs.models import CourseLab, StepRecord
from apps.milestones.models import GroupMilestone
from apps.participation.selectors import summaries as participation_summaries
from apps.peerreview.models import PeerRound
from apps.peerreview.services import peer_scores
from apps.scribing.models import ScribeDuty


@dataclass(frozen=True)
class Computed:
    percent: float | None
    detail: str
    # Non-empty when the score is "so far" and more will count (e.g. "3 of 5 assignments not
    # released yet"): the what-if treats such a component as still to come, not as final.
    to_come: str = ""
    # The assignments a score counts (autograder): what check_course holds against release.
    counted: tuple[str, ...] = ()


Students = Collection[int] | None
GroupOf = Mapping[int, int]  # student id → current group id
Source = Callable[[Course, Students, GroupOf], dict[int, Computed]]


def _students(course: Course, students: Students) -> list[int]:
    if students is not None:
        return list(students)
    return list(
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).values_list(
            "user_id", flat=True
        )
    )


def _pct(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0") + " %"


_AS_IF_RELEASED: ContextVar[bool] = ContextVar("as_if_released", default=False)


@contextmanager
def as_if_released() -> Iterator[None]:
    """Staff's preview of the gradebook "as students will see it after release": inside this
    block, sets graded but not released count as if released. Only the staff page that says it
    is a preview reads the gradebook this way; nothing read here is stored or sent."""
    token = _AS_IF_RELEASED.set(True)
    try:
        yield
    finally:
        _AS_IF_RELEASED.reset(token)


def autograder(
    course: Course, students: Students, group_of: GroupOf, assignment: str = ""
) -> dict[int, Computed]:
    # Release is the one rule: a score counts, for anyone reading the gradebook (totals, letter,
    # at-risk, what-if, Today, exports, the LMS), only once its set's results are released.
    released = {} if _AS_IF_RELEASED.get() else {"question_set__released_at__lte": timezone.now()}
    runs = (
        GradingRun.objects.filter(
            question_set__course=course,
            question_set__assignment__isnull=False,
            current_pass__isnull=False,
            **released,
        )
        .filter(**({"question_set__assignment__code": assignment} if assignment else {}))
        .order_by("question_set_id", "-created_at")
        .values_list("question_set_id", "current_pass_id", "question_set__assignment__code")
    )
    passes: dict[int, tuple[int, str]] = {}
    for set_id, pass_id, code in runs:
        passes.setdefault(set_id, (pass_id, code))  # the newest run with a complete pass
    every = set(
        QuestionSet.objects.filter(course=course, assignment__isnull=False)
        .filter(**({"assignment__code": assignment} if assignment else {}))
        .values_list("assignment__code", flat=True)
    )
    later = len(every - {code for _, code in passes.values()})
    to_come = f"{later} of {len(every)} assignments not released yet" if later else ""
    if not passes:
        # Sets exist but none is released: in a blend this part is still to come, not missing.
        if not every:
            return {}
        return {
            sid: Computed(None, "no assignment released yet", to_come)
            for sid in _students(course, students)
        }
    label = dict(passes.values())
    grades = Grade.objects.filter(grading_pass_id__in=list(label))
    if students is not None:
        grades = grades.filter(student_id__in=students)
    per: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for row in grades.values("student_id", "grading_pass_id").annotate(
        s=Sum("score"), m=Sum("max_points")
    ):
        if row["m"]:
            per[row["student_id"]].append(
                (label[row["grading_pass_id"]], row["s"] * 100 / row["m"])
            )
    out = {}
    for sid, items in per.items():
        items.sort()
        mean = sum(p for _, p in items) / len(items)
        out[sid] = Computed(
            mean,
            "mean of " + ", ".join(f"{c} {_pct(p)}" for c, p in items),
            to_come,
            tuple(c for c, _ in items),
        )
    return out


def graded_not_released(course: Course) -> list[tuple[str, str, str]]:
    """(assignment code, set key, set title) of every assignment set with a complete grading
    pass whose results are not released: what staff are told the gradebook leaves out."""
    now = timezone.now()
    rows = (
        QuestionSet.objects.filter(
            course=course, assignment__isnull=False, runs__current_pass__isnull=False
        )
        .exclude(released_at__lte=now)
        .distinct()
        .order_by("assignment__code", "key")
        .values_list("assignment__code", "key", "title")
    )
    return list(rows)


def scribing(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    owed = max(course.scribe_lectures_per_student, 1)
    now = timezone.now()
    duties = ScribeDuty.objects.filter(course=course)
    if students is not None:
        duties = duties.filter(student_id__in=students)
    ahead = Lecture.objects.filter(course=course, starts_at__gte=now).exists()
    out = {}
    for row in duties.values("student_id").annotate(
        n=Count("id"),
        accepted=Count("id", filter=Q(status=ScribeDuty.Status.ACCEPTED)),
        open=Count("id", filter=Q(due_at__gt=now) & ~Q(status=ScribeDuty.Status.ACCEPTED)),
    ):
        accepted = row["accepted"]
        if row["open"]:
            out[row["student_id"]] = Computed(
                None, f"{accepted} of {owed} notes accepted; {row['open']} not due yet"
            )
        else:
            # Fewer duties than owed while lectures remain: the rest can still be given.
            unassigned = owed - row["n"] if ahead else 0
            out[row["student_id"]] = Computed(
                min(accepted, owed) * 100 / owed,
                f"{accepted} of {owed} notes accepted",
                f"{unassigned} of {owed} duties not given yet" if unassigned > 0 else "",
            )
    return out


def checkoffs(
    course: Course, students: Students, group_of: GroupOf, assignment: str = ""
) -> dict[int, Computed]:
    """A checkoff passed belongs to the group that gave it: a student is credited with it if they
    were in that group when its slot started (their current group if they were in none then), so
    a move, a merge or a dissolution afterwards never takes it back."""
    now = timezone.now()
    published: list[tuple[int, dt.datetime | None]] = list(
        CheckoffSet.objects.filter(
            course=course, kind=CheckoffSet.Kind.ASSIGNMENT, published_at__isnull=False
        )
        .filter(**({"assignment__code": assignment} if assignment else {}))
        .annotate(last=Max("slots__starts_at"))
        .values_list("pk", "last")
    )
    sets = [pk for pk, last in published if last is not None and last < now]
    later = sum(1 for _, last in published if last is None or last >= now)
    to_come = f"{later} checkoff(s) not held yet" if later else ""
    history = _groups_over_time(course, students)
    wanted = set(group_of) | set(history) if students is None else set(students)
    if not sets:
        # Sign-ups exist but none is over: in a blend this part is still to come, not missing.
        if not later:
            return {}
        return {sid: Computed(None, "no checkoff held yet", to_come) for sid in wanted}
    passed: dict[int, list[tuple[int, dt.datetime]]] = defaultdict(list)
    for set_id, group_id, starts_at in Booking.objects.filter(
        set_id__in=sets, outcome="passed", cancelled_at__isnull=True
    ).values_list("set_id", "group_id", "slot__starts_at"):
        passed[group_id].append((set_id, starts_at))
    out = {}
    for sid in wanted:
        spans = history.get(sid, [])
        got = {
            set_id
            for g, rows in passed.items()
            for set_id, at in rows
            if (_group_at(spans, at) or group_of.get(sid)) == g
        }
        if not spans and sid not in group_of:
            continue  # never in a group: nothing to say
        n = len(got)
        out[sid] = Computed(n * 100 / len(sets), f"passed {n} of {len(sets)} checkoffs", to_come)
    return out


def peer_review(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    now = timezone.now()
    rounds = list(
        PeerRound.objects.filter(course=course, published_at__isnull=False, due_at__lt=now)
    )
    if not rounds:
        return {}
    # A round made but not yet due (published or not) adds a score later: the mean is "so far".
    later = PeerRound.objects.filter(course=course).exclude(pk__in=[r.pk for r in rounds]).count()
    to_come = f"{later} review round(s) not due yet" if later else ""
    # Each round's score belongs to the group reviewed; a student is credited with the score of
    # the group they were in when the round was due (their current group if in none then).
    per_round = [(r.due_at, peer_scores(r)) for r in rounds]  # one query a round: one or two
    history = _groups_over_time(course, students)
    wanted = set(group_of) | set(history) if students is None else set(students)
    out = {}
    for sid in wanted:
        scores = []
        for due_at, by_group in per_round:
            g = _group_at(history.get(sid, []), due_at) or group_of.get(sid)
            if g is not None and g in by_group:
                scores.append(by_group[g])
        if scores:
            mean = sum(scores) / len(scores)
            out[sid] = Computed(mean * 20, f"peer score {mean:.2f} of 5", to_come)
    return out


def _groups_over_time(
    course: Course, students: Students
) -> dict[int, list[tuple[int, dt.datetime, dt.datetime | None]]]:
    """Every student's group memberships, past and present: (group, joined, left)."""
    rows = GroupMembership.objects.filter(course=course)
    if students is not None:
        rows = rows.filter(user_id__in=students)
    out: dict[int, list[tuple[int, dt.datetime, dt.datetime | None]]] = defaultdict(list)
    for uid, gid, joined, left in rows.values_list("user_id", "group_id", "joined_at", "left_at"):
        out[uid].append((gid, joined, left))
    return out


def _group_at(
    spans: list[tuple[int, dt.datetime, dt.datetime | None]], when: dt.datetime
) -> int | None:
    for gid, joined, left in spans:
        if joined <= when and (left is None or when < left):
            return gid
    return None


def milestones(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    """A milestone's record belongs to the group that made it; a student is credited with the
    record of the group they were in at the milestone's due time (their current group if they
    were in none then), so a merge, a move or a dissolution never takes back what was earned."""
    now = timezone.now()
    due = {
        m.pk: m.due_at
        for m in Milestone.objects.filter(course=course, tracked=True, due_at__lt=now)
    }
    later = Milestone.objects.filter(course=course, tracked=True, due_at__gte=now).count()
    to_come = f"{later} milestone(s) not due yet" if later else ""
    if not due:
        return {}
    credit: dict[tuple[int, int], float] = {}
    rows = GroupMilestone.objects.filter(milestone_id__in=list(due)).values_list(
        "group_id", "milestone_id", "submitted_at", "extension_hours", "excused"
    )
    for group_id, milestone_id, submitted_at, ext, excused in rows:
        if excused:
            credit[(group_id, milestone_id)] = 100
        elif submitted_at is not None:
            late = submitted_at > due[milestone_id] + dt.timedelta(hours=ext)
            credit[(group_id, milestone_id)] = 50 if late else 100
    history = _groups_over_time(course, students)
    wanted = set(group_of) | set(history) if students is None else students
    out = {}
    for sid in wanted:
        got = []
        for milestone_id, due_at in due.items():
            g = _group_at(history.get(sid, []), due_at) or group_of.get(sid)
            if g is not None and (g, milestone_id) in credit:
                got.append(credit[(g, milestone_id)])
        if not got and sid not in group_of:
            continue  # never in a group that recorded anything: nothing to say
        total = sum(got)  # milestones with nothing recorded count 0
        out[sid] = Computed(
            total / len(due), f"{len(got)} of {len(due)} due milestones recorded", to_come
        )
    return out


def impact(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    """A group's impact score counts for the students who were its members when it was given: a
    student is credited with the latest score given to a group while they were in it (whatever
    that group is given after they leave), and one who joins a scored group gets its score only
    if they have none of their own. A score cleared while they were a member counts as none."""
    given = list(
        ImpactScoreGiven.objects.filter(course=course)
        .order_by("given_at", "pk")
        .values_list("group_id", "percent", "given_at")
    )
    if not given:
        return {}
    # Evidence is added and scored until the impact update closes: until then a score is "so far".
    closes = impact_closes_at(course)
    to_come = ""
    if closes is not None and closes >= timezone.now():
        to_come = "evidence open until " + format_instant(closes, course.timezone)
    latest = {g: p for g, p, _ in given}  # each group's score now (None: cleared)
    history = _groups_over_time(course, students)
    groups = {g for g, _, _ in given}
    names = dict(Group.objects.filter(pk__in=groups).values_list("pk", "name"))
    wanted = set(group_of) | set(history) if students is None else set(students)
    out = {}
    for sid in wanted:
        spans = history.get(sid, [])
        held = [(g, p) for g, p, at in given if _group_at(spans, at) == g]
        now_in = group_of.get(sid)
        if held:
            g, p = held[-1]
            if p is None:
                continue  # cleared while they were in it
            why = (
                "the group's impact score"
                if g == now_in
                else f"{names.get(g, 'an earlier group')}'s impact score, given while a member"
            )
            out[sid] = Computed(float(p), why, to_come)
        elif now_in is not None and (p := latest.get(now_in)) is not None:
            out[sid] = Computed(float(p), "the group's impact score", to_come)
    return out


def participation(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    """Participation so far is a share of the lectures held: while lectures remain, every later
    one moves it (up or down), so the score is "so far", never final, until the last is held."""
    sums = participation_summaries(course, students)
    ahead = Lecture.objects.filter(course=course, starts_at__gte=timezone.now()).count()
    return {
        sid: Computed(
            s.score,
            f"attended {s.attended} of {s.held} lectures, {s.contributions} contributions",
            f"{ahead} of {s.held + ahead} lectures not held yet" if ahead else "",
        )
        for sid, s in sums.items()
        if s.score is not None
    }


def labs(course: Course, students: Students, group_of: GroupOf) -> dict[int, Computed]:
    known = shipped_labs()
    now = timezone.now()
    windows = [w for w in CourseLab.objects.filter(course=course) if w.lab_key in known]
    steps = {w.lab_key: len(known[w.lab_key].steps) for w in windows if w.closes_at < now}
    if not steps:
        return {}
    later = sum(1 for w in windows if w.closes_at >= now)
    to_come = f"{later} of {len(windows)} labs not closed yet" if later else ""
    ids = _students(course, students)
    done: dict[tuple[int, str], int] = {
        (row["record__student_id"], row["record__lab_key"]): row["n"]
        for row in StepRecord.objects.filter(
            record__course=course,
            record__lab_key__in=list(steps),
            record__student_id__in=ids,
            submitted_at__isnull=False,
        )
        .values("record__student_id", "record__lab_key")
        .annotate(n=Count("id"))
    }
    out = {}
    for sid in ids:
        shares = [(k, min(done.get((sid, k), 0), n), n) for k, n in sorted(steps.items())]
        mean = sum(d * 100 / n for _, d, n in shares) / len(shares)
        out[sid] = Computed(mean, ", ".join(f"{k} {d} of {n} steps" for k, d, n in shares), to_come)
    return out


SOURCES: dict[str, Source] = {
    "autograder": autograder,
    "scribing": scribing,
    "checkoffs": checkoffs,
    "peer-review": peer_review,
    "milestones": milestones,
    "impact": impact,
    "participation": participation,
    "labs": labs,
}
SOURCE_HELP = {
    "manual": "entered or imported by staff",
    "autograder": "autograder: mean of the graded assignment question sets",
    "scribing": "scribing: accepted notes of those owed",
    "checkoffs": "checkoffs: assignment checkoffs passed",
    "peer-review": "peer review: the group's mean peer score (of 5)",
    "milestones": "milestones: on time 100 %, late 50 %, missing 0 %",
    "impact": "impact: the group's score from its evidence",
    "participation": "participation: lectures attended and contributions recorded",
    "labs": "labs: steps submitted of the closed labs",
}


def by_weight(blend: Mapping[str, float]) -> list[tuple[str, float]]:
    """A blend's parts, largest share first (the database keeps JSON keys in its own order)."""
    return sorted(blend.items(), key=lambda kv: -float(kv[1]))


def blend_help(blend: dict[str, float]) -> str:
    """How a composed component is made, for the pages: 'blend: staff 80 %, peer review 20 %'."""
    total = sum(float(w) for w in blend.values()) or 1.0
    names = {"manual": "staff", "peer-review": "peer review", "autograder": "autograded"}

    def named(key: str) -> str:
        base, _, scope = key.partition(":")
        return f"{scope} {names.get(base, base)}".strip()

    parts = [f"{named(k)} {float(w) * 100 / total:.4g} %" for k, w in by_weight(blend)]
    return "blend: " + ", ".join(parts)


def source_for(name: str) -> Source | None:
    """A source by name, or one scoped to an assignment ('autograder:A3', 'checkoffs:A3') for a
    composed assignment score."""
    base, _, scope = name.partition(":")
    if not scope:
        return SOURCES.get(base)
    if base == "autograder":
        return lambda c, s, g: autograder(c, s, g, assignment=scope)
    if base == "checkoffs":
        return lambda c, s, g: checkoffs(c, s, g, assignment=scope)
    return None
