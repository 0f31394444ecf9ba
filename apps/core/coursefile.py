"""The course file: parse YAML, validate every key, and report each problem with its key path.

Pure: no database. `parse_course_file(text)` returns a `CourseFile` or raises
`CourseFileError` listing every problem found (`assignments[2].due: not a date`), so a staff
member fixes the whole file in one pass. Dates are course-local; `instant()` turns them into
aware UTC datetimes with the course's due/release wall-clock times.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import zoneinfo
from collections import Counter
from decimal import Decimal
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError


class CourseFileError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _when(value: Any) -> dt.date | dt.datetime:
    """A date, or a datetime (naive = course-local). YAML already parses ISO dates."""
    if isinstance(value, dt.datetime | dt.date):
        return value
    if isinstance(value, str):
        for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
            try:
                return parse(value.strip())
            except ValueError:
                continue
    raise ValueError("not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)")


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError("not a date (use YYYY-MM-DD)")


def _hhmm(value: Any) -> str:
    # YAML 1.1 reads an unquoted 09:30 as the base-60 integer 570; accept it and say nothing.
    if isinstance(value, int) and 0 <= value < 24 * 60:
        return f"{value // 60:02d}:{value % 60:02d}"
    if isinstance(value, str):
        try:
            return dt.time.fromisoformat(value.strip()).strftime("%H:%M")
        except ValueError:
            pass
    raise ValueError("not a time of day (use HH:MM, 24-hour)")


def _ipv4(value: Any) -> str:
    try:
        return str(ipaddress.IPv4Address(str(value)))
    except ValueError:
        raise ValueError("not an IPv4 address") from None


def _tz(value: Any) -> str:
    if isinstance(value, str) and value in zoneinfo.available_timezones():
        return value
    raise ValueError("not an IANA time zone (e.g. America/Los_Angeles)")


When = Annotated[dt.date | dt.datetime, BeforeValidator(_when)]
Date = Annotated[dt.date, BeforeValidator(_date)]
HHMM = Annotated[str, BeforeValidator(_hhmm)]
IPv4 = Annotated[str, BeforeValidator(_ipv4)]
TZ = Annotated[str, BeforeValidator(_tz)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=60)]
Text = Annotated[str, Field(min_length=1, max_length=200)]
Count = Annotated[int, Field(ge=0, le=1000)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LectureTime(Strict):
    start: HHMM
    end: HHMM


class CourseLink(Strict):
    label: Text
    url: Annotated[str, Field(pattern=r"^(https?://\S+)?$", max_length=300)] = ""  # "" = TBD


class CourseMeta(Strict):
    code: Slug
    number: str = ""
    title: Text
    term: Text
    timezone: TZ
    location: str = ""
    lecture_time: LectureTime = LectureTime(start="09:30", end="11:00")
    instructors: list[Text] = []
    links: list[CourseLink] = []


class GroupSize(Strict):
    min: Annotated[int, Field(ge=1, le=50)] = 4
    max: Annotated[int, Field(ge=1, le=50)] = 6


class SlackPolicy(Strict):
    allowance: Count = 3
    max_per_assignment: Count = 1
    grace_minutes: Count = 0


class ScribePolicy(Strict):
    lectures_per_student: Count = 2
    min_gap_days: Count = 7
    notes_due_days: Count = 7


class PeerReviewPolicy(Strict):
    reviews_per_group: Count = 1


class CheckoffPolicy(Strict):
    cutoff_hours: Count = 2


class SharingPolicy(Strict):
    max_hours: Annotated[int, Field(ge=1, le=24 * 14)] = 48


class ReminderPolicy(Strict):
    hours_before: list[Annotated[int, Field(ge=1, le=24 * 30)]] = [48, 6]


class StudyPolicy(Strict):
    # The pre/post study protocol: raw imported quiz files and the participant-ID map are
    # deleted this many days after the course's last scheduled day (instructors warned 30 days
    # before); de-identified responses and the report stay.
    retention_days: Annotated[int, Field(ge=30, le=3650)] = 365


class ExtensionPolicy(Strict):
    # Extension requests (apps.extensions): a request of at most `auto_approve_max_days` made
    # before the deadline is approved at once, for each student's first `auto_approve_per_student`
    # such requests (0 turns auto-approval off); requests close this many hours after the
    # deadline; nobody may ask for more than `max_days`.
    auto_approve_max_days: Annotated[int, Field(ge=0, le=14)] = 2
    auto_approve_per_student: Annotated[int, Field(ge=0, le=20)] = 1
    closes_hours_after_deadline: Annotated[int, Field(ge=0, le=24 * 30)] = 48
    max_days: Annotated[int, Field(ge=1, le=30)] = 7


class ReliefPolicy(Strict):
    # How every source of more time on one deadline composes (apps.slackdays.rules, "Relief"):
    # slack days, the student's own extensions, their group's, and accommodations count toward
    # one cap per deadline of `cap_days` (null: no cap, today's old behaviour). `slack_with_
    # extension`: "stack" (both count, under the cap) or "refund" (an approved extension gives
    # back a slack day spent on that deadline, the ledger row saying so, and slack cannot be
    # spent on a deadline that has an extension). `accommodations_count`: whether standing
    # accommodation hours count toward the cap. `over_cap`: a student's request that would pass
    # the cap is "refuse"d with the arithmetic, or goes to "staff" with it. Auto-approval is
    # counted per student (extensions.auto_approve_per_student), per group and per deadline
    # (null: not counted). `group_request_closes_own`: an approved group request closes the
    # members' own open requests on that deadline.
    cap_days: Annotated[int, Field(ge=1, le=60)] | None = 7
    slack_with_extension: Literal["stack", "refund"] = "stack"
    accommodations_count: bool = True
    over_cap: Literal["refuse", "staff"] = "staff"
    auto_approve_per_group: Annotated[int, Field(ge=0, le=20)] | None = 1
    auto_approve_per_deadline: Annotated[int, Field(ge=0, le=20)] | None = 1
    group_request_closes_own: bool = True


class AnonymousGradingPolicy(Strict):
    # Anonymous written grading (apps.autograder.fairgrading): who may show students' names
    # again on a set graded without names. "instructors" (the default) or "head_tas": the
    # instructors and the TAs whose e-mails are listed in `head_tas`. Every reveal is audited
    # and listed on the set's page.
    reveal_names: Literal["instructors", "head_tas"] = "instructors"
    head_tas: list[Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+$", max_length=254)]] = []


class PracticePolicy(Strict):
    # Practice sets (apps.autograder.practice): after this many wrong checks of one variant its
    # correct value and worked solution are shown and a new variant is offered (0: only when
    # the student presses "Show the solution").
    solution_after_wrong_checks: Annotated[int, Field(ge=0, le=50)] = 3


class Policy(Strict):
    due_time: HHMM = "23:59"
    release_time: HHMM = "00:00"
    group_size: GroupSize = GroupSize()
    slack_days: SlackPolicy = SlackPolicy()
    scribing: ScribePolicy = ScribePolicy()
    peer_review: PeerReviewPolicy = PeerReviewPolicy()
    checkoffs: CheckoffPolicy = CheckoffPolicy()
    sharing_windows: SharingPolicy = SharingPolicy()
    reminders: ReminderPolicy = ReminderPolicy()
    study: StudyPolicy = StudyPolicy()
    extensions: ExtensionPolicy = ExtensionPolicy()
    relief: ReliefPolicy = ReliefPolicy()
    anonymous_grading: AnonymousGradingPolicy = AnonymousGradingPolicy()
    practice: PracticePolicy = PracticePolicy()


class LectureEntry(Strict):
    number: Annotated[int, Field(ge=1, le=500)]
    date: Date
    title: Text
    guest: bool = False
    part: str = ""
    notes: str = ""


class RecessEntry(Strict):
    date: Date
    note: str = "No class"


class AssignmentEntry(Strict):
    code: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$", max_length=16)]
    title: Text
    release: When
    due: When
    accepts_slack: bool = True


class MilestoneEntry(Strict):
    """A deadline of the project: due at one instant. `tracked`: each group records a
    submission (link) for it; an untracked one (group formation) is only a date.
    `sources_required`: groups must say which sources and AI assistants they used, and where,
    when they record it (tracked milestones only); left out, the setting made on the milestone
    board is kept (a new milestone does not ask)."""

    key: Slug
    name: Text
    due: When
    notes: str = ""
    tracked: bool = True
    sources_required: StrictBool | None = None


EVENT_KINDS = ("release", "session", "meeting", "office-hours", "other")


class EventEntry(Strict):
    """Something that happens (a start and an end), never something due: releases, the
    presentation sessions, the poster session. A bare date is an all-day event."""

    key: Slug
    name: Text
    kind: Annotated[str, Field(pattern="^(" + "|".join(EVENT_KINDS) + ")$")] = "other"
    start: When
    end: When | None = None
    location: str = ""
    notes: str = ""


class LabEntry(Strict):
    """A lab of courses/labs/ the course runs, and when: students lock predictions and submit
    steps from `opens` (release time) until `closes` (due time); the lab stays readable after."""

    key: Slug
    opens: When
    closes: When


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


class OfficeHoursEntry(Strict):
    """Weekly office hours, from the first lecture's week to the last lecture (recess skipped)."""

    weekday: Annotated[str, Field(pattern="^(" + "|".join(WEEKDAYS) + ")$")]
    start: HHMM
    end: HHMM
    location: str = ""
    who: str = ""


# Where a component's scores come from: `manual` = entered or imported by staff; the others are
# read from what courseops already knows (the gradebook app computes them).
SCORE_SOURCES = (
    "manual",
    "autograder",
    "scribing",
    "checkoffs",
    "peer-review",
    "milestones",
    "impact",
    "participation",
    "labs",
)  # never "practice": practice never reaches the gradebook (issue 70)


class GradingPart(Strict):
    key: Slug
    name: Text
    weight: Annotated[Decimal, Field(ge=0, le=100)]
    satisfactory_threshold: Annotated[Decimal, Field(ge=0, le=100)] = Decimal(60)
    source: Annotated[str, Field(pattern="^(" + "|".join(SCORE_SOURCES) + ")$")] = "manual"
    # A composed score: source → weight (any positive numbers; they are normalised), e.g.
    # technical quality = {manual: 70, peer-review: 30} (staff's score and the peer score).
    # An assignment's own score: {autograder:A3: 60, manual: 20, checkoffs:A3: 20} (its
    # autograded numbers, a hands-on part staff enter, its oral checkoff).
    blend: dict[
        Annotated[
            str,
            Field(
                pattern="^("
                + "|".join(SCORE_SOURCES)
                + ")$|^(autograder|checkoffs):[A-Za-z0-9_-]+$"
            ),
        ],
        Annotated[Decimal, Field(gt=0, le=100)],
    ] = {}


class LetterCutoff(Strict):
    """The lowest course percentage that earns `letter`."""

    letter: Annotated[str, Field(pattern=r"^[A-F][+-]?$|^P$")]
    min: Annotated[Decimal, Field(ge=0, le=100)]


class GradingEntry(GradingPart):
    parts: list[GradingPart] = []


class NodeDefaults(Strict):
    machine_type: str = "a3-highgpu-8g"
    gpu_model: str = "H100 80GB"
    gpu_count: Annotated[int, Field(ge=1, le=16)] = 8


class NodeEntry(Strict):
    name: Annotated[str, Field(pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
    zone: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d+-[a-z]$")]
    internal_ip: IPv4
    machine_type: str | None = None
    gpu_model: str | None = None
    gpu_count: Annotated[int, Field(ge=1, le=16)] | None = None

    @property
    def region(self) -> str:
        return self.zone.rsplit("-", 1)[0]


class StaticIPEntry(Strict):
    address: IPv4
    resource_name: Annotated[str, Field(pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
    region: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d+$")]


class GpuHourQuota(Strict):
    # GPU-hours each group may use per `per` (a week from Monday 00:00 course time, or the whole
    # term): at `warn_at_pct` % the group is e-mailed, at 100 % its node is stopped. Without
    # this section (or with gpu_hours: 0) there is no quota. Staff may set a group's own.
    gpu_hours: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    per: Literal["week", "term"] = "week"
    warn_at_pct: Annotated[int, Field(ge=1, le=99)] = 80


class ScheduledShutdown(Strict):
    # Every night at `at` (24-hour HH:MM in `zone`, which must be the course's own time zone,
    # named so the file reads unambiguously) running nodes are stopped, except a group's whose
    # opt-out for that night was approved: by staff (`opt_out: staff`) or as asked (`auto`).
    at: Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
    zone: TZ
    opt_out: Literal["staff", "auto"] = "staff"


class Compute(Strict):
    gcp_project: Annotated[str, Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")]
    node_defaults: NodeDefaults = NodeDefaults()
    nodes: list[NodeEntry] = []
    static_ips: list[StaticIPEntry] = []
    # At this milestone's deadline every group of at least the minimum size gets a node and an
    # IP (and an e-mail with its SSH line); `false` leaves allocation to the staff's button.
    allocate_at_formation: bool = True
    formation_milestone: Slug = "group-formation"
    # A sharing window's access files are given out only once a run record names the window.
    windows_need_run_record: bool = False
    # The budget: what one running node costs an hour (US$) and the course's credits. Staff are
    # e-mailed at 50, 80 and 100 % of the credits; 0 turns the budget off.
    price_per_node_hour: Annotated[Decimal, Field(ge=0, le=10000)] = Decimal(0)
    credit_budget: Annotated[Decimal, Field(ge=0, le=100_000_000)] = Decimal(0)
    # A node whose busiest GPU stays under idle_below_pct % for idle_hours is idle: its group
    # and staff are e-mailed, and with idle_stop it is stopped.
    idle_below_pct: Annotated[int, Field(ge=1, le=100)] = 5
    idle_hours: Annotated[int, Field(ge=1, le=168)] = 6
    idle_stop: bool = False
    # The group holding a node may start and stop it (staff always may).
    groups_may_power: bool = False
    # Quotas and schedules per group (apps.compute.usage.quotas, apps.compute.usage.schedules).
    gpu_hour_quota: GpuHourQuota = GpuHourQuota()
    scheduled_shutdown: ScheduledShutdown | None = None


class CourseFile(Strict):
    course: CourseMeta
    policy: Policy = Policy()
    lectures: list[LectureEntry] = []
    recess: list[RecessEntry] = []
    assignments: list[AssignmentEntry] = []
    milestones: list[MilestoneEntry] = []
    events: list[EventEntry] = []
    office_hours: list[OfficeHoursEntry] = []
    labs: list[LabEntry] = []
    grading: list[GradingEntry] = []
    letter_grades: list[LetterCutoff] = []
    compute: Compute | None = None

    def instant(self, value: dt.date | dt.datetime, *, release: bool = False) -> dt.datetime:
        """Course-local date/datetime → aware datetime (UTC). A bare date takes the policy's
        due time, or its release time when `release`."""
        tz = zoneinfo.ZoneInfo(self.course.timezone)
        if isinstance(value, dt.datetime):
            local = value if value.tzinfo else value.replace(tzinfo=tz)
        else:
            hhmm = self.policy.release_time if release else self.policy.due_time
            local = dt.datetime.combine(value, dt.time.fromisoformat(hhmm), tzinfo=tz)
        return local.astimezone(dt.UTC)

    def event_span(self, e: EventEntry) -> tuple[dt.datetime, dt.datetime]:
        """[start, end) of an event as aware UTC instants: a bare date starts at 00:00 and a
        bare end date ends at the next midnight (all day); no end means one hour, or all day."""
        tz = zoneinfo.ZoneInfo(self.course.timezone)

        def at(value: dt.date | dt.datetime, *, end: bool) -> dt.datetime:
            if isinstance(value, dt.datetime):
                return (value if value.tzinfo else value.replace(tzinfo=tz)).astimezone(dt.UTC)
            day = value + dt.timedelta(days=1) if end else value
            return dt.datetime.combine(day, dt.time(0), tzinfo=tz).astimezone(dt.UTC)

        start = at(e.start, end=False)
        if e.end is not None:
            return start, at(e.end, end=True)
        if isinstance(e.start, dt.datetime):
            return start, start + dt.timedelta(hours=1)
        return start, at(e.start, end=True)

    def office_hour_spans(self) -> list[tuple[str, OfficeHoursEntry, dt.datetime, dt.datetime]]:
        """(key, entry, start, end) for every weekly occurrence between the first and the last
        lecture, recess days skipped."""
        if not self.lectures:
            return []
        tz = zoneinfo.ZoneInfo(self.course.timezone)
        first = min(lec.date for lec in self.lectures)
        last = max(lec.date for lec in self.lectures)
        recess = {r.date for r in self.recess}
        out = []
        for oh in self.office_hours:
            wd = WEEKDAYS.index(oh.weekday)
            day = first + dt.timedelta(days=(wd - first.weekday()) % 7)
            while day <= last:
                if day not in recess:
                    s = dt.datetime.combine(day, dt.time.fromisoformat(oh.start), tzinfo=tz)
                    e = dt.datetime.combine(day, dt.time.fromisoformat(oh.end), tzinfo=tz)
                    key = f"office-hours-{day.isoformat()}-{oh.start.replace(':', '')}"
                    out.append((key, oh, s.astimezone(dt.UTC), e.astimezone(dt.UTC)))
                day += dt.timedelta(days=7)
        return out

    def lecture_span(self, day: dt.date) -> tuple[dt.datetime, dt.datetime]:
        tz = zoneinfo.ZoneInfo(self.course.timezone)
        start = dt.datetime.combine(
            day, dt.time.fromisoformat(self.course.lecture_time.start), tzinfo=tz
        )
        end = dt.datetime.combine(
            day, dt.time.fromisoformat(self.course.lecture_time.end), tzinfo=tz
        )
        return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


_MESSAGES = {
    "missing": "required",
    "extra_forbidden": "unknown key",
    "int_parsing": "not a whole number",
    "int_type": "not a whole number",
    "int_from_float": "not a whole number",
    "bool_parsing": "not true/false",
    "bool_type": "not true/false",
    "decimal_parsing": "not a number",
    "decimal_type": "not a number",
    "list_type": "must be a list",
    "model_type": "must be a mapping of keys",
    "model_attributes_type": "must be a mapping of keys",
    "string_type": "not text",
    "string_too_short": "must not be empty",
}


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


def _message(err: Any) -> str:
    kind = err["type"]
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == "string_pattern_mismatch":
        return f"{err['input']!r} does not match the allowed form {err['ctx']['pattern']}"
    return _MESSAGES.get(kind, str(err["msg"]).lower())


def _duplicates(values: list[Any]) -> set[Any]:
    return {v for v, n in Counter(values).items() if n > 1}


def _cross_checks(cf: CourseFile) -> list[str]:
    problems: list[str] = []
    lt = cf.course.lecture_time
    if lt.start >= lt.end:
        problems.append("course.lecture_time: end must be after start")
    gs = cf.policy.group_size
    if gs.min > gs.max:
        problems.append("policy.group_size: min must not exceed max")
    slack = cf.policy.slack_days
    if slack.max_per_assignment > slack.allowance:
        problems.append("policy.slack_days.max_per_assignment: exceeds the allowance")

    for i, lab in enumerate(cf.labs):
        if cf.instant(lab.closes) <= cf.instant(lab.opens, release=True):
            problems.append(f"labs[{i}].closes: must be after opens")
    if _duplicates([lab.key for lab in cf.labs]):
        problems.append("labs: a lab is listed twice")

    dup = _duplicates([lec.number for lec in cf.lectures])
    recess = {r.date for r in cf.recess}
    for i, lec in enumerate(cf.lectures):
        if lec.number in dup:
            problems.append(f"lectures[{i}].number: {lec.number} is used by more than one lecture")
        if lec.date in recess:
            problems.append(f"lectures[{i}].date: {lec.date} is a recess day")
    dup_recess = _duplicates([r.date for r in cf.recess])
    problems += [
        f"recess[{i}].date: listed more than once"
        for i, r in enumerate(cf.recess)
        if r.date in dup_recess
    ]

    dup = _duplicates([a.code for a in cf.assignments])
    for i, a in enumerate(cf.assignments):
        if a.code in dup:
            problems.append(f"assignments[{i}].code: {a.code} is used by more than one assignment")
        if cf.instant(a.due) <= cf.instant(a.release, release=True):
            problems.append(f"assignments[{i}].due: must be after its release ({a.release})")

    dup = _duplicates([m.key for m in cf.milestones])
    problems += [
        f"milestones[{i}].key: {m.key} is used by more than one milestone"
        for i, m in enumerate(cf.milestones)
        if m.key in dup
    ]
    problems += [
        f"milestones[{i}].sources_required: {m.key} is not tracked (groups record nothing for "
        "it), so it cannot ask for a sources statement"
        for i, m in enumerate(cf.milestones)
        if m.sources_required and not m.tracked
    ]

    dup = _duplicates([e.key for e in cf.events])
    for i, e in enumerate(cf.events):
        if e.key in dup:
            problems.append(f"events[{i}].key: {e.key} is used by more than one event")
        if e.end is not None and cf.event_span(e)[1] <= cf.event_span(e)[0]:
            problems.append(f"events[{i}].end: must be after its start ({e.start})")
    for i, oh in enumerate(cf.office_hours):
        if oh.start >= oh.end:
            problems.append(f"office_hours[{i}].end: must be after its start ({oh.start})")

    keys = [g.key for g in cf.grading] + [p.key for g in cf.grading for p in g.parts]
    dup = _duplicates(keys)
    for i, g in enumerate(cf.grading):
        if g.key in dup:
            problems.append(f"grading[{i}].key: {g.key} is used more than once")
        for j, p in enumerate(g.parts):
            if p.key in dup:
                problems.append(f"grading[{i}].parts[{j}].key: {p.key} is used more than once")
        if g.parts and sum(p.weight for p in g.parts) != g.weight:
            total = sum(p.weight for p in g.parts)
            problems.append(f"grading[{i}].parts: weights add up to {total}, not {g.weight}")
    codes = {a.code for a in cf.assignments}
    for i, g in enumerate(cf.grading):
        for where, part in [(f"grading[{i}]", g)] + [
            (f"grading[{i}].parts[{j}]", p) for j, p in enumerate(g.parts)
        ]:
            for source in part.blend:
                scope = source.partition(":")[2]
                if scope and scope not in codes:
                    problems.append(f"{where}.blend: {source}: no assignment {scope}")
    if cf.grading and (total := sum(g.weight for g in cf.grading)) != 100:
        problems.append(f"grading: weights add up to {total}, not 100")

    mins = [c.min for c in cf.letter_grades]
    for i, c in enumerate(cf.letter_grades):
        if i and c.min >= mins[i - 1]:
            problems.append(
                f"letter_grades[{i}].min: {c.min} must be below the letter above it ({mins[i - 1]})"
            )
    for letter in _duplicates([c.letter for c in cf.letter_grades]):
        problems.append(f"letter_grades: {letter} is listed more than once")

    if cf.compute is not None:
        nodes, ips = cf.compute.nodes, cf.compute.static_ips
        dup_names = _duplicates([n.name for n in nodes])
        dup_ips = _duplicates([n.internal_ip for n in nodes])
        for i, n in enumerate(nodes):
            if n.name in dup_names:
                problems.append(f"compute.nodes[{i}].name: {n.name} is used by more than one node")
            if n.internal_ip in dup_ips:
                problems.append(f"compute.nodes[{i}].internal_ip: {n.internal_ip} is used twice")
        regions = {n.region for n in nodes}
        dup_addr = _duplicates([s.address for s in ips])
        dup_res = _duplicates([s.resource_name for s in ips])
        for i, s in enumerate(ips):
            if s.address in dup_addr:
                problems.append(f"compute.static_ips[{i}].address: {s.address} is listed twice")
            if s.resource_name in dup_res:
                problems.append(f"compute.static_ips[{i}].resource_name: listed twice")
            if nodes and s.region not in regions:
                problems.append(
                    f"compute.static_ips[{i}].region: {s.region} has no node "
                    f"(nodes are in {', '.join(sorted(regions))})"
                )
        shutdown = cf.compute.scheduled_shutdown
        if shutdown is not None and shutdown.zone != cf.course.timezone:
            problems.append(
                f"compute.scheduled_shutdown.zone: {shutdown.zone} is not the course's time zone "
                f"({cf.course.timezone}); the shutdown time is read in course time, so name "
                f"{cf.course.timezone}"
            )
        milestone_keys = {m.key for m in cf.milestones}
        if (
            cf.compute.allocate_at_formation
            and cf.compute.formation_milestone not in milestone_keys
        ):
            problems.append(
                f"compute.formation_milestone: no milestone {cf.compute.formation_milestone!r} "
                "(set allocate_at_formation: false, or name one of: "
                f"{', '.join(sorted(milestone_keys)) or 'none listed'})"
            )
    return problems


class _Loader(yaml.SafeLoader):
    """Leaves timestamps as text: PyYAML raises a bare ValueError on 2026-02-30, and our
    validators turn the text into a date or a problem with its key path."""


_Loader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    lambda loader, node: loader.construct_scalar(node),  # type: ignore[arg-type]
)


def parse_course_file(text: str) -> CourseFile:
    """Parse and validate the whole file. Raises CourseFileError with every problem found."""
    try:
        raw = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CourseFileError([f"(file): {where}not valid YAML ({problem})"]) from None
    if not isinstance(raw, dict):
        raise CourseFileError(["(file): must be a mapping with at least a 'course' key"])
    try:
        cf = CourseFile.model_validate(raw)
    except ValidationError as exc:
        raise CourseFileError(
            [f"{_path(tuple(e['loc']))}: {_message(e)}" for e in exc.errors()]
        ) from None
    problems = _cross_checks(cf)
    if problems:
        raise CourseFileError(problems)
    return cf
