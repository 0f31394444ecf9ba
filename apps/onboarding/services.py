"""Writes: the questionnaire (staff set it up; students answer until it closes), enrollment
decisions (staff; e-mailed on commit), reminders to students who have not answered, and group
suggestions (made, edited, then accepted by staff: only acceptance changes groups). Every write
is one transaction with an audit row."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from apps.calendar.models import Lecture, Milestone
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff, is_student
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.core.timefmt import format_instant
from apps.core.transactions import in_callers_transaction
from apps.groups import services as groups
from apps.groups.models import Group, GroupMembership
from apps.onboarding import defaults, matching, rules
from apps.onboarding.models import (
    DECISIONS,
    KINDS,
    EnrollmentDecision,
    GroupSuggestion,
    Question,
    Questionnaire,
    QuestionnaireResponse,
)


class AnswerProblems(DomainError):
    """Every answer that needs attention, by question key (the page marks each question)."""

    def __init__(self, problems: dict[str, str]) -> None:
        key, message = next(iter(problems.items()))
        super().__init__(f"{len(problems)} answer(s) need attention. {key}: {message}", field=key)
        self.problems = problems


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may do this.")


def questionnaire_get(course: Course) -> Questionnaire | None:
    return Questionnaire.objects.filter(course=course).first()


def questionnaire_setup(*, actor: User | None, course: Course) -> Questionnaire:
    """The course's questionnaire with the standard questions, opening at the first lecture and
    closing two days before group formation (or a week after opening). Idempotent."""
    if actor is not None:
        _require_staff(actor, course)
    with transaction.atomic():
        existing = Questionnaire.objects.select_for_update().filter(course=course).first()
        if existing is not None:
            return existing
        first = (
            Lecture.objects.filter(course=course)
            .order_by("starts_at")
            .values_list("starts_at", flat=True)
            .first()
        )
        opens = first or timezone.now()
        formation = (
            Milestone.objects.filter(course=course, key="group-formation")
            .values_list("due_at", flat=True)
            .first()
        )
        closes = (
            formation - dt.timedelta(days=2)
            if formation and formation - dt.timedelta(days=2) > opens
            else opens + dt.timedelta(days=7)
        )
        q = Questionnaire.objects.create(
            course=course,
            opens_at=opens,
            closes_at=closes,
            intro="Tell us what you want to work on and with whom; we use it for "
            "enrollment and compute decisions and to suggest project groups.",
        )
        Question.objects.bulk_create(
            [
                Question(
                    questionnaire=q,
                    position=i,
                    key=d["key"],
                    kind=d["kind"],
                    prompt=d["prompt"],
                    help=d.get("help", ""),
                    options=d.get("options", []),
                    required=d.get("required", True),
                    role=d.get("role", ""),
                )
                for i, d in enumerate(defaults.QUESTIONS)
            ]
        )
        audit_record(
            actor=actor,
            action="questionnaire.created",
            course=course,
            obj=q,
            after={"opens": opens.isoformat(), "closes": closes.isoformat()},
        )
    return q


def questionnaire_update(
    *, actor: User, course: Course, opens_at: dt.datetime, closes_at: dt.datetime, intro: str
) -> Questionnaire:
    _require_staff(actor, course)
    if closes_at <= opens_at:
        raise DomainError("The questionnaire must close after it opens.", field="closes_at")
    with transaction.atomic():
        q = Questionnaire.objects.select_for_update().filter(course=course).first()
        if q is None:
            raise NotFound("This course has no questionnaire yet.")
        before = {"opens": q.opens_at.isoformat(), "closes": q.closes_at.isoformat()}
        q.opens_at, q.closes_at, q.intro = opens_at, closes_at, intro[:5000]
        q.save(update_fields=["opens_at", "closes_at", "intro"])
        audit_record(
            actor=actor,
            action="questionnaire.changed",
            course=course,
            obj=q,
            before=before,
            after={"opens": opens_at.isoformat(), "closes": closes_at.isoformat()},
        )
    return q


def question_add(
    *,
    actor: User,
    course: Course,
    kind: str,
    prompt: str,
    options: list[str],
    required: bool,
    help_text: str = "",
) -> Question:
    _require_staff(actor, course)
    if kind not in dict(KINDS):
        raise DomainError("kind is single, multiple, scale, text or teammates.", field="kind")
    options = [o.strip() for o in options if o.strip()]
    if kind in ("single", "multiple") and len(options) < 2:
        raise DomainError("Give at least two choices.", field="options")
    if not prompt.strip():
        raise DomainError("Write the question.", field="prompt")
    with transaction.atomic():
        q = Questionnaire.objects.select_for_update().filter(course=course).first()
        if q is None:
            raise NotFound("This course has no questionnaire yet.")
        n = q.questions.count()
        key = f"q{n + 1}"
        while q.questions.filter(key=key).exists():
            n += 1
            key = f"q{n + 1}"
        question = Question.objects.create(
            questionnaire=q,
            key=key,
            position=n + 1,
            kind=kind,
            prompt=prompt.strip()[:300],
            help=help_text.strip()[:300],
            options=options,
            required=required,
        )
        audit_record(
            actor=actor,
            action="questionnaire.question_added",
            course=course,
            obj=question,
            after={"kind": kind, "prompt": question.prompt},
        )
    return question


def question_remove(*, actor: User, course: Course, question_id: int) -> None:
    _require_staff(actor, course)
    with transaction.atomic():
        question = Question.objects.filter(questionnaire__course=course, pk=question_id).first()
        if question is None:
            raise NotFound("No such question.")
        answered = QuestionnaireResponse.objects.filter(
            questionnaire=question.questionnaire, answers__has_key=question.key
        ).count()
        if answered:
            raise Conflict(
                f"{answered} student(s) answered this question; it stays so their answers keep "
                "their meaning."
            )
        audit_record(
            actor=actor,
            action="questionnaire.question_removed",
            course=course,
            obj=question,
            before={"prompt": question.prompt},
        )
        question.delete()


def response_save(*, actor: User, course: Course, raw: dict[str, Any]) -> QuestionnaireResponse:
    """Save the student's answers (one response per student; editable until the close). Every
    problem is reported at once, by question."""
    if not is_student(actor, course):
        raise NotAllowed("Only students answer the questionnaire.")
    q = questionnaire_get(course)
    if q is None:
        raise NotFound("This course has no questionnaire.")
    now = timezone.now()
    if now < q.opens_at:
        raise Conflict(f"The questionnaire opens {format_instant(q.opens_at, course.timezone)}.")
    if now > q.closes_at:
        raise Conflict(
            f"The questionnaire closed {format_instant(q.closes_at, course.timezone)}; ask staff "
            "to change an answer."
        )
    answers, problems = rules.clean_answers(list(q.questions.all()), raw)
    if problems:
        raise AnswerProblems(problems)
    with transaction.atomic():
        response, created = QuestionnaireResponse.objects.select_for_update().get_or_create(
            questionnaire=q, student=actor, defaults={"answers": answers}
        )
        if not created:
            response.answers = answers
            response.save(update_fields=["answers", "updated_at"])
        audit_record(
            actor=actor,
            action="questionnaire.answered" if created else "questionnaire.changed_answers",
            course=course,
            obj=response,
        )
    return response


def decision_set(
    *, actor: User, course: Course, student_id: int, decision: str, note: str = ""
) -> EnrollmentDecision:
    """Admit, waitlist or decline a student; the student is e-mailed once the change commits."""
    _require_staff(actor, course)
    if decision not in dict(DECISIONS):
        raise DomainError("decision is admitted, waitlisted or declined.", field="decision")
    student = User.objects.filter(
        pk=student_id, memberships__course=course, memberships__role=Role.STUDENT
    ).first()
    if student is None:
        raise NotFound("No such student in this course.")
    with transaction.atomic():
        row = (
            EnrollmentDecision.objects.select_for_update()
            .filter(course=course, student=student)
            .first()
        )
        before = {"decision": row.decision if row else None}
        if row is not None and row.decision == decision and row.note == note.strip():
            return row
        row, _ = EnrollmentDecision.objects.update_or_create(
            course=course,
            student=student,
            defaults={"decision": decision, "note": note.strip()[:300], "decided_by": actor},
        )
        audit_record(
            actor=actor,
            action="enrollment.decided",
            course=course,
            obj=row,
            before=before,
            after={"decision": decision, "student": student.email},
        )
        transaction.on_commit(lambda: task_named("onboarding.email_decision").delay(row.pk))
    return row


def unanswered(course: Course) -> Any:
    """Active students without a response, by name (a queryset, to page)."""
    answered = QuestionnaireResponse.objects.filter(questionnaire__course=course).values(
        "student_id"
    )
    return (
        User.objects.filter(
            memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
        )
        .exclude(pk__in=answered)
        .order_by("full_name", "email")
    )


def remind_unanswered(*, actor: User, course: Course) -> int:
    """E-mail every student who has not answered; at most once per 10 minutes per course."""
    _require_staff(actor, course)
    q = questionnaire_get(course)
    if q is None or timezone.now() > q.closes_at:
        raise Conflict("The questionnaire is closed; there is nothing to remind about.")
    if not cache.add(f"onboarding:remind:{course.pk}", 1, timeout=600):
        raise Conflict("Reminders were sent less than 10 minutes ago.")
    ids = list(unanswered(course).values_list("pk", flat=True))
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="questionnaire.reminded",
            course=course,
            obj=q,
            after={"students": len(ids)},
        )
        transaction.on_commit(
            lambda: task_named("onboarding.email_reminders").delay(course.pk, ids)
        )
    return len(ids)


# --- group suggestions ----------------------------------------------------------------------


def suggestion_pool(course: Course) -> tuple[list[int], list[frozenset[int]]]:
    """Who a suggestion places: active students in no group (not declined), and the members of
    groups under the minimum size (kept together)."""
    declined = EnrollmentDecision.objects.filter(course=course, decision="declined").values(
        "student_id"
    )
    grouped = GroupMembership.objects.filter(course=course, left_at__isnull=True)
    free = list(
        User.objects.filter(
            memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
        )
        .exclude(pk__in=grouped.values("user_id"))
        .exclude(pk__in=declined)
        .values_list("pk", flat=True)
    )
    small = (
        Group.objects.filter(course=course, dissolved_at__isnull=True)
        .annotate(n=Count("memberships", filter=Q(memberships__left_at__isnull=True)))
        .filter(n__gt=0, n__lt=course.group_min_size)
        .values_list("pk", flat=True)
    )
    together: dict[int, set[int]] = {}
    for gid, uid in grouped.filter(group_id__in=list(small)).values_list("group_id", "user_id"):
        together.setdefault(gid, set()).add(uid)
    people = sorted(set(free) | {u for s in together.values() for u in s})
    return people, [frozenset(s) for s in together.values()]


def suggestion_inputs(
    course: Course, people: list[int]
) -> tuple[dict[int, frozenset[int]], dict[int, frozenset[str]]]:
    """Each person's teammate wishes (as user ids, within `people`) and research interests, read
    from the questions whose role says so."""
    q = questionnaire_get(course)
    if q is None:
        return {}, {}
    roles = {x.key: x.role for x in q.questions.all()}
    emails = dict(User.objects.filter(pk__in=people).values_list("email", "pk"))
    by_email = {e.lower(): pk for e, pk in emails.items()}
    wishes: dict[int, frozenset[int]] = {}
    interests: dict[int, frozenset[str]] = {}
    for student_id, answers in QuestionnaireResponse.objects.filter(
        questionnaire=q, student_id__in=people
    ).values_list("student_id", "answers"):
        for key, value in answers.items():
            if roles.get(key) == "teammates":
                wishes[student_id] = frozenset(by_email[e] for e in value if e in by_email)
            elif roles.get(key) == "interests":
                interests[student_id] = frozenset(value)
    return wishes, interests


def pool_key(people: list[int], together: list[frozenset[int]]) -> str:
    """A fingerprint of who waits for a group and who is kept together: it changes when anyone
    joins, leaves or changes a group, which makes a suggestion stale."""
    spec = [sorted(people), sorted(sorted(t) for t in together)]
    return hashlib.sha256(json.dumps(spec).encode()).hexdigest()


MAX_SEED = 1_000_000  # as the page's field says


def suggestion_make(*, actor: User, course: Course, seed: int = 0) -> GroupSuggestion:
    """Suggest groups (nothing changes until they are accepted). A pool of at most
    `SUGGEST_INLINE_MAX` people is computed here; a larger one (any size, the whole course) is
    queued for a worker and returned queued — its page shows the progress. Raises Conflict with
    the reason when no split into groups of the allowed size exists (inline only; a worker's
    suggestion ends failed with it)."""
    _require_staff(actor, course)
    if not 0 <= seed <= MAX_SEED:
        raise DomainError(f"The seed is a whole number from 0 to {MAX_SEED:,}.", field="seed")
    if GroupSuggestion.objects.filter(
        course=course, status=GroupSuggestion.Status.ACCEPTING
    ).exists():
        raise Conflict(
            "The last suggestion is being accepted by a worker; suggest again once its groups "
            "exist."
        )
    people, together = suggestion_pool(course)
    if len(people) <= settings.SUGGEST_INLINE_MAX:
        result, stats = _suggestion_compute(course, people, together, seed, None)
        if not result.ok:
            raise Conflict(result.reason)
        with transaction.atomic():
            s = GroupSuggestion.objects.create(
                course=course,
                seed=seed,
                groups=result.groups,
                stats=stats,
                created_by=actor,
                progress=100,
                pool_key=pool_key(people, together),
            )
            audit_record(actor=actor, action="groups.suggested", course=course, obj=s, after=stats)
        return s
    with transaction.atomic():
        running = GroupSuggestion.objects.filter(
            course=course, status__in=GroupSuggestion.IN_PROGRESS
        ).first()
        if running is not None:  # one at a time per course; asking again shows that one
            return running
        try:
            with transaction.atomic():
                s = GroupSuggestion.objects.create(
                    course=course,
                    seed=seed,
                    status=GroupSuggestion.Status.QUEUED,
                    stats={"people": len(people)},
                    created_by=actor,
                )
        except IntegrityError:  # another request queued one a moment ago: that one it is
            return GroupSuggestion.objects.get(
                course=course, status__in=GroupSuggestion.IN_PROGRESS
            )
        audit_record(
            actor=actor,
            action="groups.suggestion_queued",
            course=course,
            obj=s,
            after={"people": len(people), "seed": seed},
        )
        suggestion_id = s.pk

        def unqueued(_exc: BaseException) -> None:
            GroupSuggestion.objects.filter(pk=suggestion_id).update(
                status=GroupSuggestion.Status.FAILED,
                note="The task queue did not answer; nothing was computed. Suggest again.",
            )

        enqueue_on_commit(
            lambda: task_named("onboarding.suggest").delay(suggestion_id),
            what="the group suggestion",
            critical=True,
            on_failure=unqueued,
        )
    return s


def _suggestion_compute(
    course: Course,
    people: list[int],
    together: list[frozenset[int]],
    seed: int,
    progress: matching.Progress | None,
) -> tuple[matching.MatchingResult, dict[str, Any]]:
    wishes, interests = suggestion_inputs(course, people)
    p = matching.MatchingProblem(
        people, wishes, interests, together, course.group_min_size, course.group_max_size, seed
    )
    result = matching.suggest(p, progress)
    stats = {
        "people": len(people),
        "mutual_pairs": result.mutual_pairs,
        "mutual_kept": result.mutual_kept,
        "mutual_possible": result.mutual_possible,
        "one_sided_kept": result.one_sided_kept,
        "shared_interests": result.shared_interests,
        "optimal": result.optimal,
        "mutual_units_split": result.mutual_units_split,
        "answered": len(set(wishes) | set(interests)),
    }
    return result, stats


def suggestion_run(suggestion_id: int) -> str:
    """The worker's part: compute a queued suggestion for the pool as it is now, reporting
    progress per block, and end it done (or failed with the reason). A second delivery of the
    same task finds it no longer queued and does nothing."""
    claimed = GroupSuggestion.objects.filter(
        pk=suggestion_id, status=GroupSuggestion.Status.QUEUED
    ).update(status=GroupSuggestion.Status.RUNNING, progress=0, updated_at=timezone.now())
    if not claimed:
        return "not queued"
    s = GroupSuggestion.objects.select_related("course").get(pk=suggestion_id)
    people, together = suggestion_pool(s.course)

    def progress(done: int, total: int) -> None:
        GroupSuggestion.objects.filter(pk=suggestion_id, status="running").update(
            progress=min(99, 100 * done // max(1, total)), updated_at=timezone.now()
        )

    result, stats = _suggestion_compute(s.course, people, together, s.seed, progress)
    with transaction.atomic():
        live = GroupSuggestion.objects.select_for_update().filter(
            pk=suggestion_id, status=GroupSuggestion.Status.RUNNING
        )
        if not live.exists():  # ended by the sweeper meanwhile
            return "ended elsewhere"
        if not result.ok:
            live.update(
                status=GroupSuggestion.Status.FAILED, note=result.reason, stats=stats, progress=0
            )
            return "failed"
        live.update(
            status=GroupSuggestion.Status.DONE,
            groups=result.groups,
            stats=stats,
            progress=100,
            pool_key=pool_key(people, together),
        )
        audit_record(
            actor=s.created_by,
            action="groups.suggested",
            course=s.course,
            obj=s,
            after=stats,
        )
    return "done"


def suggestion_stale(course: Course, s: GroupSuggestion) -> bool:
    """A finished, unaccepted suggestion whose pool has changed since it was computed."""
    if s.status != GroupSuggestion.Status.DONE or s.accepted_at is not None or not s.pool_key:
        return False
    return pool_key(*suggestion_pool(course)) != s.pool_key


def suggestion_get(course: Course, suggestion_id: int | None = None) -> GroupSuggestion | None:
    qs = GroupSuggestion.objects.filter(course=course)
    return qs.filter(pk=suggestion_id).first() if suggestion_id else qs.first()


def _open_suggestion(course: Course, suggestion_id: int) -> GroupSuggestion:
    """The suggestion, locked, while it can still change (404 if not this course's)."""
    s = GroupSuggestion.objects.select_for_update().filter(course=course, pk=suggestion_id).first()
    if s is None:
        raise NotFound("No such suggestion.")
    if s.accepted_at is not None:
        raise Conflict("This suggestion was already accepted.")
    if s.status == GroupSuggestion.Status.ACCEPTING:
        raise Conflict("This suggestion is being accepted already; its page shows when it is done.")
    if s.status != GroupSuggestion.Status.DONE:
        raise Conflict(f"This suggestion is {s.get_status_display().lower()}, not ready yet.")
    return s


def suggestion_move(
    *, actor: User, course: Course, suggestion_id: int, student_id: int, to_group: int
) -> GroupSuggestion:
    """Staff edit a suggestion before accepting it: move one person to another suggested group
    (or a new one, `to_group` = the number after the last). Sizes are checked at acceptance."""
    _require_staff(actor, course)
    with transaction.atomic():
        s = _open_suggestion(course, suggestion_id)
        groups_ = [list(g) for g in s.groups]
        source = next((g for g in groups_ if student_id in g), None)
        if source is None:
            raise DomainError("That person is not in this suggestion.", field="student")
        if not 1 <= to_group <= len(groups_) + 1:
            raise DomainError(f"Choose a group from 1 to {len(groups_) + 1}.", field="to_group")
        source.remove(student_id)
        if to_group == len(groups_) + 1:
            groups_.append([])
        groups_[to_group - 1].append(student_id)
        s.groups = [g for g in groups_ if g]
        s.save(update_fields=["groups"])
        audit_record(
            actor=actor,
            action="groups.suggestion_edited",
            course=course,
            obj=s,
            after={"student": student_id, "to": to_group},
        )
    return s


def suggestion_accept(*, actor: User, course: Course, suggestion_id: int) -> list[Group] | None:
    """Make the suggested groups real, all or nothing: each suggested group that holds members of
    an existing small group grows that group; the others become new groups ("Group N"). Refused
    if sizes are off or anyone's group changed since the suggestion was made. A suggestion of at
    most `SUGGEST_INLINE_MAX` people is accepted here and its groups returned; a larger one is
    checked here, marked accepting and handed to a worker (None), which makes the groups in one
    transaction (`suggestion_accept_run`) while its page waits."""
    _require_staff(actor, course)
    with transaction.atomic():
        s = _open_suggestion(course, suggestion_id)
        _acceptable(course, s)
        if sum(len(g) for g in s.groups) <= settings.SUGGEST_INLINE_MAX:
            return _accept(actor, course, s)
        s.status = GroupSuggestion.Status.ACCEPTING
        s.note = ""
        s.save(update_fields=["status", "note", "updated_at"])
        audit_record(
            actor=actor,
            action="groups.suggestion_accept_queued",
            course=course,
            obj=s,
            after={"groups": len(s.groups), "people": sum(len(g) for g in s.groups)},
        )
        actor_id = actor.pk

        def unqueued(_exc: BaseException) -> None:
            GroupSuggestion.objects.filter(
                pk=suggestion_id, status=GroupSuggestion.Status.ACCEPTING
            ).update(
                status=GroupSuggestion.Status.DONE,
                note="The task queue did not answer; no group was made. Accept again.",
            )

        enqueue_on_commit(
            lambda: task_named("onboarding.accept").delay(suggestion_id, actor_id),
            what="accepting the suggested groups",
            critical=True,
            on_failure=unqueued,
        )
    return None


def suggestion_accept_run(suggestion_id: int, actor_id: int) -> str:
    """The worker's part of accepting a large suggestion: the same checks again (someone's group
    may have changed while it waited), then every group made in this one transaction, or nothing
    and the reason in the suggestion's note. A second delivery finds it no longer accepting."""
    with transaction.atomic():
        s = (
            GroupSuggestion.objects.select_for_update()
            .select_related("course")
            .filter(pk=suggestion_id, status=GroupSuggestion.Status.ACCEPTING)
            .first()
        )
        if s is None:
            return "not accepting"
        actor = User.objects.filter(pk=actor_id).first()
        try:
            with transaction.atomic():
                if actor is None:
                    raise NotAllowed("The person who accepted it no longer has an account.")
                _require_staff(actor, s.course)
                _acceptable(s.course, s)
                made = _accept(actor, s.course, s)
        except DomainError as e:
            s.status = GroupSuggestion.Status.DONE
            s.note = f"Accepting did not happen, no group was made: {e.message}"
            s.save(update_fields=["status", "note", "updated_at"])
            return "refused"
        return f"{len(made)} groups"


def suggestion_crashed(suggestion_id: int, error: str) -> None:
    """A worker's computation or acceptance stopped on an unexpected error: a computation ends
    failed, an acceptance (rolled back, so nothing was made) is ready to accept again; either
    way the page names the error."""
    GroupSuggestion.objects.filter(pk=suggestion_id, status__in=GroupSuggestion.IN_PROGRESS).update(
        status=GroupSuggestion.Status.FAILED,
        note=f"The worker stopped with an error ({error[:300]}); suggest again.",
    )
    GroupSuggestion.objects.filter(
        pk=suggestion_id, status=GroupSuggestion.Status.ACCEPTING
    ).update(
        status=GroupSuggestion.Status.DONE,
        note=f"Accepting did not happen, no group was made: the worker stopped with an error "
        f"({error[:300]}). Accept again.",
    )


def _acceptable(course: Course, s: GroupSuggestion) -> None:
    """Raise Conflict unless the suggestion still fits the pool as it is now."""
    people, together = suggestion_pool(course)
    if s.pool_key and pool_key(people, together) != s.pool_key:
        raise Conflict(
            "Someone's group changed since this suggestion was made (a student joined, "
            "left or changed group); make a new one."
        )
    p = matching.MatchingProblem(
        people, {}, {}, together, course.group_min_size, course.group_max_size
    )
    problems = matching.check(p, s.groups)
    if problems:
        raise Conflict(
            "The suggestion no longer fits: " + "; ".join(problems) + ". Make a new one."
        )


@in_callers_transaction
def _accept(actor: User, course: Course, s: GroupSuggestion) -> list[Group]:
    """Make the groups of a checked suggestion (inside the caller's transaction)."""
    people = [u for g in s.groups for u in g]
    current = dict(
        GroupMembership.objects.filter(
            course=course, left_at__isnull=True, user_id__in=people
        ).values_list("user_id", "group_id")
    )
    made: list[Group] = []
    taken = set(Group.objects.filter(course=course).values_list("name", flat=True))
    n = 1
    for members in s.groups:
        existing = sorted({current[u] for u in members if u in current})
        if existing:
            target = Group.objects.get(pk=existing[0])
        else:
            while f"Group {n}" in taken:
                n += 1
            taken.add(f"Group {n}")
            target = groups.group_staff_create(actor=actor, course=course, name=f"Group {n}")
        for u in members:
            if current.get(u) != target.pk:
                groups.member_move(actor=actor, course=course, user_id=u, group_id=target.pk)
        made.append(target)
    s.status = GroupSuggestion.Status.DONE
    s.note = ""
    s.accepted_at = timezone.now()
    s.save(update_fields=["status", "note", "accepted_at", "updated_at"])
    audit_record(
        actor=actor,
        action="groups.suggestion_accepted",
        course=course,
        obj=s,
        after={"groups": [g.name for g in made]},
    )
    return made


def decision_counts(course: Course) -> dict[str, int]:
    rows = (
        EnrollmentDecision.objects.filter(course=course).values("decision").annotate(n=Count("id"))
    )
    out = {k: 0 for k, _ in DECISIONS}
    out.update({r["decision"]: r["n"] for r in rows})
    out["undecided"] = Membership.objects.filter(
        course=course, role=Role.STUDENT, is_active=True
    ).count() - sum(out.values())
    return out
