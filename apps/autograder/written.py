"""Short written answers graded with rubric items, Gradescope-style.

A written question's rubric is a list of items, each a score change and a comment. Under
`positive` scoring a student starts at 0 and applied items add; under `negative` they start at
full marks and applied items take away; the result is held within [0, points]. An answer with no
item applied is "not graded yet" (0). TAs apply items to many answers at once, identical answers
(after normalising case, spaces and end punctuation) grouped together.

Scores live where numeric ones do: `Grade` rows of the run's passes, so results, exports, the
regrade flow and the gradebook read them unchanged. Applying or removing an item, or changing an
item's points, re-scores the affected students' grades in the run's current pass and in a pass
in progress, in the same transaction; a grading chunk locks the set's written questions first,
so a pass never writes a score computed from marks that changed under it.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils.crypto import salted_hmac

from apps.autograder.models import (
    Answer,
    Grade,
    GradingPass,
    GradingRun,
    Question,
    QuestionSet,
    RubricItem,
    RubricMark,
    SecondMark,
)
from apps.autograder.regrades import overrides, regrade_detail
from apps.autograder.reveal import may_reveal, reveal_refusal
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import STAFF_ROLES, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction

SCORING = ("positive", "negative")
DEFAULT_MAX_CHARS = 2000
_SPACES = re.compile(r"\s+")


def scoring_of(q: Question) -> str:
    return str((q.rubric_spec or {}).get("scoring", "positive"))


def max_chars_of(q: Question) -> int:
    return int((q.rubric_spec or {}).get("max_chars", DEFAULT_MAX_CHARS))


def normalise(text: str) -> str:
    """The form identical answers share: case, runs of spaces and end punctuation ignored."""
    return _SPACES.sub(" ", text).strip().strip(".!;:,").strip().lower()


def score_of(q: Question, applied: Iterable[RubricItem]) -> float:
    base = q.points if scoring_of(q) == "negative" else 0.0
    return min(max(base + sum(i.points for i in applied), 0.0), q.points)


def rows_for(q: Question, student_ids: list[int]) -> list[dict[str, Any]]:
    """Each student's grade row for a written question, in `grade_students`' shape."""
    answers = {
        a.student_id: a
        for a in Answer.objects.filter(question=q, part=0, student_id__in=student_ids)
    }
    items = {i.pk: i for i in q.rubric_items.all()}
    applied: dict[int, list[RubricItem]] = defaultdict(list)
    for item_id, student_id in RubricMark.objects.filter(
        item__question=q, student_id__in=student_ids
    ).values_list("item_id", "student_id"):
        applied[student_id].append(items[item_id])
    out = []
    for s in student_ids:
        a = answers.get(s)
        text = (a.text or a.raw) if a else ""
        marks = sorted(applied.get(s, []), key=lambda i: (i.position, i.pk))
        blank = not text.strip()
        graded = bool(marks)
        fraction = score_of(q, marks) / q.points if graded and q.points else 0.0
        out.append(
            {
                "student_id": s,
                "question_id": q.pk,
                "fraction": fraction,
                "points": q.points,
                "detail": {
                    "written": True,
                    "blank": blank,
                    "ungraded": not graded,
                    "excerpt": text[:300],
                    "items": [
                        {"key": i.key, "points": i.points, "comment": i.comment} for i in marks
                    ],
                },
            }
        )
    return out


def with_regrades(question_set: QuestionSet, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A re-scored regrade request's points stand in every later pass (numbers and words)."""
    kept = overrides(question_set)
    for row in rows:
        r = kept.get((row["question_id"], row["student_id"]))
        if r is not None and r.new_points is not None and row["points"]:
            row["fraction"] = r.new_points / row["points"]
            row["detail"] = {**row["detail"], "regrade": regrade_detail(r)}
    return rows


def lock_written(question_set: QuestionSet) -> None:
    """Taken by a grading chunk before it reads marks, and by every mark or item change: the
    two serialise on the set's written questions. The course row is share-locked first (FOR KEY
    SHARE: it waits only for a change that locks the course, such as a roster import), so a
    roster import that takes a grader off the staff (the course, then these questions, to hand
    their answers back) and a mark being saved (these questions, then an audit row that refers
    to the course) take the two in the same order and never deadlock."""
    if connection.vendor == "postgresql":  # SQLite locks the whole file: nothing to order
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM core_course WHERE id = %s FOR KEY SHARE",
                [question_set.course_id],
            )
    list(
        Question.objects.select_for_update()
        .filter(question_set=question_set, kind=Question.Kind.WRITTEN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _live_pass_ids(question_set: QuestionSet) -> list[int]:
    current = GradingRun.objects.filter(
        question_set=question_set, current_pass__isnull=False
    ).values_list("current_pass_id", flat=True)
    running = GradingPass.objects.filter(
        run__question_set=question_set, status__in=GradingPass.IN_PROGRESS
    ).values_list("pk", flat=True)
    return sorted({*current, *running})


def rescore(q: Question, student_ids: Iterable[int]) -> int:
    """Re-score these students' grades for `q` in every pass readers see or will see (a decided
    regrade's points still stand). Call inside the change's transaction, after `lock_written`.
    Returns how many grade rows changed."""
    ids = sorted(set(student_ids))
    if not ids:
        return 0
    rows = {r["student_id"]: r for r in with_regrades(q.question_set, rows_for(q, ids))}
    changed = []
    for g in Grade.objects.filter(
        grading_pass_id__in=_live_pass_ids(q.question_set), question=q, student_id__in=ids
    ):
        r = rows[g.student_id]
        score = round(r["fraction"] * r["points"], 6)
        if not math.isclose(score, g.score) or g.detail != r["detail"]:
            g.score, g.max_points, g.detail = score, r["points"], r["detail"]
            changed.append(g)
    Grade.objects.bulk_update(changed, ["score", "max_points", "detail"], batch_size=1000)
    return len(changed)


def _written(actor: User, question: Question) -> None:
    if not is_staff(actor, question.question_set.course):
        raise NotAllowed("Only the course's instructors and TAs grade written answers.")
    if question.kind != Question.Kind.WRITTEN:
        raise DomainError(f"{question.key} is not a written question.")


def marks_apply(
    *,
    actor: User,
    question: Question,
    student_ids: list[int],
    add: list[int] = (),  # type: ignore[assignment]
    remove: list[int] = (),  # type: ignore[assignment]
) -> int:
    """Apply (`add`) and take off (`remove`) rubric items on many students' answers at once;
    their scores change in the same transaction. Returns how many students were touched."""
    items = marks_checked(actor, question, student_ids, add, remove)
    course = question.question_set.course
    students = set(
        Membership.objects.filter(
            course=course, role=Role.STUDENT, user_id__in=student_ids
        ).values_list("user_id", flat=True)
    )
    if len(students) != len(set(student_ids)):
        raise NotFound("Some of those answers are not from students of this course.")
    with transaction.atomic():
        lock_written(question.question_set)
        still_staff(actor, course)
        RubricMark.objects.bulk_create(
            [RubricMark(item_id=i, student_id=s, applied_by=actor) for i in add for s in students],
            ignore_conflicts=True,
        )
        if remove:
            RubricMark.objects.filter(item_id__in=remove, student_id__in=students).delete()
        rescore(question, students)
        marks_audited(actor, "written.marked", question, len(students), items, add, remove)
    return len(students)


def still_staff(actor: User, course: Any) -> None:
    """Read again under the written-grading lock (not from the request's cache): a grader taken
    off the staff while saving marks is refused, so their handed-back answers stay handed back."""
    if actor.is_superuser:
        return
    if not Membership.objects.filter(
        user=actor, course=course, role__in=STAFF_ROLES, is_active=True
    ).exists():
        raise NotAllowed("You are no longer on this course's staff; no mark was saved.")


def marks_checked(
    actor: User, question: Question, student_ids: list[int], add: list[int], remove: list[int]
) -> dict[int, RubricItem]:
    """The checks every change of rubric marks makes first (staff, a written question, some
    answers, some items, items of this question); returns the question's items by id."""
    _written(actor, question)
    if not student_ids:
        raise DomainError("Choose at least one answer.", field="students")
    if not add and not remove:
        raise DomainError("Choose at least one rubric item to apply or remove.", field="items")
    items = {i.pk: i for i in question.rubric_items.all()}
    if any(i not in items for i in [*add, *remove]):
        raise NotFound("No such rubric item on this question.", field="items")
    return items


@in_callers_transaction
def marks_audited(
    actor: User,
    action: str,
    question: Question,
    students: int,
    items: dict[int, RubricItem],
    add: list[int],
    remove: list[int],
) -> None:
    """The audit row of a change of rubric marks: how many answers, which items on and off."""
    audit_record(
        actor=actor,
        action=action,
        course=question.question_set.course,
        obj=question,
        after={
            "students": students,
            "added": [items[i].key for i in add],
            "removed": [items[i].key for i in remove],
        },
    )


def item_save(
    *,
    actor: User,
    question: Question,
    key: str,
    points: Any,
    comment: str,
    item_id: int | None = None,
) -> RubricItem:
    """Add a rubric item, or change one; every answer it is applied to is re-scored at once."""
    _written(actor, question)
    key = key.strip()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,29}", key):
        raise DomainError(
            "The item's key is up to 30 lower-case letters, digits and dashes.", field="key"
        )
    try:
        value = float(points)
    except (TypeError, ValueError):
        raise DomainError("The score change is a number, e.g. 1 or -0.5.", field="points") from None
    if not math.isfinite(value) or abs(value) > question.points:
        raise DomainError(
            f"The score change is within ±{question.points:g} (the question's points).",
            field="points",
        )
    if not comment.strip():
        raise DomainError("Write the comment the student reads.", field="comment")
    with transaction.atomic():
        lock_written(question.question_set)
        if item_id is None:
            if question.rubric_items.filter(key=key).exists():
                raise DomainError(f"{key} is already an item of this question.", field="key")
            item = RubricItem.objects.create(
                question=question,
                key=key,
                points=value,
                comment=comment.strip(),
                position=question.rubric_items.count() + 1,
            )
            before: dict[str, Any] = {}
        else:
            found = RubricItem.objects.filter(question=question, pk=item_id).first()
            if found is None:
                raise NotFound("No such rubric item on this question.")
            if question.rubric_items.filter(key=key).exclude(pk=item_id).exists():
                raise DomainError(f"{key} is already an item of this question.", field="key")
            item = found
            before = {"key": item.key, "points": item.points, "comment": item.comment}
            item.key, item.points, item.comment = key, value, comment.strip()
            item.save(update_fields=["key", "points", "comment"])
        affected = list(item.marks.values_list("student_id", flat=True))
        changed = rescore(question, affected)
        audit_record(
            actor=actor,
            action="written.item_saved",
            course=question.question_set.course,
            obj=question,
            before=before,
            after={"key": key, "points": value, "comment": item.comment, "rescored": changed},
        )
    return item


@dataclass
class AnswerGroup:
    """Answers that read the same once normalised, with the items every one of them has."""

    text: str
    student_ids: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    item_ids: set[int] = field(default_factory=set)
    partly: set[int] = field(default_factory=set)  # items some but not all of them have
    keys: list[str] = field(default_factory=list)  # what the page and API name each answer by

    @property
    def size(self) -> int:
        return len(self.student_ids)


def answer_groups(
    question: Question,
    *,
    q: str = "",
    ungraded: bool = False,
    hide_names: bool = False,
    only: set[int] | None = None,
    without: set[int] | None = None,
    second_grader: int | None = None,
) -> list[AnswerGroup]:
    """Every answered student's written answer, identical ones grouped, largest group first.
    With `hide_names` the groups carry no names and a search reads the answers' words only.
    `only` / `without` keep or leave out these students (a grader's share of a split question);
    with `second_grader` the marks shown are that grader's own second marks, never the first
    grader's (double grading is independent)."""
    answers = Answer.objects.filter(question=question, part=0).exclude(Q(text="") & Q(raw=""))
    if only is not None:
        answers = answers.filter(student_id__in=only)
    if without:
        answers = answers.exclude(student_id__in=without)
    if q and hide_names:
        answers = answers.filter(text__icontains=q)
    elif q:
        answers = answers.filter(
            Q(text__icontains=q)
            | Q(student__email__icontains=q)
            | Q(student__full_name__icontains=q)
        )
    marks: dict[int, set[int]] = defaultdict(set)
    source = (
        SecondMark.objects.filter(item__question=question, grader_id=second_grader)
        if second_grader is not None
        else RubricMark.objects.filter(item__question=question)
    )
    for item_id, student_id in source.values_list("item_id", "student_id"):
        marks[student_id].add(item_id)
    groups: dict[str, AnswerGroup] = {}
    # Hidden names: nothing the page or the API gives out leads back to a person, neither the
    # order (by name) nor the account id (the roster names it).
    order = ("pk",) if hide_names else ("student__full_name", "student__email")
    for a in answers.select_related("student").order_by(*order):
        if ungraded and marks.get(a.student_id):
            continue
        text = a.text or a.raw
        g = groups.setdefault(normalise(text), AnswerGroup(text=text))
        g.student_ids.append(a.student_id)
        if hide_names:
            g.keys.append(anonymous_key(question.question_set_id, a.student_id))
        else:
            g.keys.append(str(a.student_id))
            g.names.append(a.student.get_full_name() or a.student.email)
    for g in groups.values():
        sets = [marks.get(s, set()) for s in g.student_ids]
        g.item_ids = set.intersection(*sets) if sets else set()
        g.partly = set.union(*sets) - g.item_ids if sets else set()
    return sorted(groups.values(), key=lambda g: (-g.size, g.text.lower()))


ANONYMOUS_PREFIX = "a-"


def anonymous_key(question_set_id: int, student_id: int) -> str:
    """The name of a student's answer while a set's names are hidden: the same for every
    question of the set (so a grader can follow one answer), unguessable without the server's
    secret, and different in every set (so two sets' keys cannot be joined)."""
    mac = salted_hmac("courseops.grading.anonymous", f"{question_set_id}:{student_id}")
    return ANONYMOUS_PREFIX + mac.hexdigest()[:20]


def answer_key(question_set: QuestionSet, student_id: int) -> str:
    """How pages and the API name a student's answer: their account id, or while the set grades
    without names their anonymous key."""
    if question_set.hide_names:
        return anonymous_key(question_set.pk, student_id)
    return str(student_id)


def students_of_keys(question: Question, keys: Iterable[str]) -> tuple[list[int], list[str]]:
    """The students named by `keys` (account ids, or anonymous keys of this question's set),
    and the keys that name nobody who answered it."""
    wanted = [k.strip() for k in keys if k.strip()]
    anonymous = {k for k in wanted if k.startswith(ANONYMOUS_PREFIX)}
    by_key: dict[str, int] = {}
    if anonymous:
        answered = Answer.objects.filter(question=question, part=0).values_list(
            "student_id", flat=True
        )
        set_id = question.question_set_id
        by_key = {anonymous_key(set_id, sid): sid for sid in answered}
    ids: list[int] = []
    unknown: list[str] = []
    for k in wanted:
        if k in by_key:
            ids.append(by_key[k])
        elif k.isdigit() and not k.startswith(ANONYMOUS_PREFIX):
            ids.append(int(k))
        else:
            unknown.append(k)
    return ids, unknown


def names_hidden_set(*, actor: User, question_set: QuestionSet, hidden: bool) -> None:
    """Staff turn anonymous grading of a set's written answers on; only those who may reveal
    names (instructors; head TAs when the course file allows, `apps.autograder.reveal`) turn
    it off. Either is audited: a reveal's row ("grading.names_shown") is listed on the set's
    page."""
    course = question_set.course
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff change how answers are graded.")
    if not hidden and question_set.hide_names and not may_reveal(actor, course):
        raise NotAllowed(reveal_refusal(course))
    with transaction.atomic():
        before = question_set.hide_names
        QuestionSet.objects.filter(pk=question_set.pk).update(hide_names=hidden)
        question_set.hide_names = hidden
        audit_record(
            actor=actor,
            action="grading.names_hidden" if hidden else "grading.names_shown",
            course=course,
            obj=question_set,
            before={"hide_names": before},
            after={"hide_names": hidden},
        )


def grader_assign(*, actor: User, question: Question, grader_id: int | None) -> None:
    """Staff give a written question to one staff member to grade (None: to anyone)."""
    course = question.question_set.course
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff assign graders.")
    if question.kind != Question.Kind.WRITTEN:
        raise DomainError("Only written questions are graded by hand.", field="grader")
    if (
        grader_id is not None
        and not Membership.objects.filter(
            course=course, user_id=grader_id, role__in=STAFF_ROLES, is_active=True
        ).exists()
    ):
        raise DomainError("Choose one of the course's TAs or instructors.", field="grader")
    with transaction.atomic():
        before = question.grader_id
        Question.objects.filter(pk=question.pk).update(grader_id=grader_id)
        question.grader_id = grader_id
        audit_record(
            actor=actor,
            action="grading.grader_assigned",
            course=course,
            obj=question,
            before={"grader": before},
            after={"grader": grader_id},
        )


def progress(question_set: QuestionSet) -> dict[int, tuple[int, int]]:
    """{written question id: (students graded, students who answered)} in two queries."""
    answered = dict(
        Answer.objects.filter(
            question__question_set=question_set, question__kind=Question.Kind.WRITTEN, part=0
        )
        .exclude(Q(text="") & Q(raw=""))
        .values("question_id")
        .annotate(n=Count("student_id", distinct=True))
        .values_list("question_id", "n")
    )
    graded = dict(
        RubricMark.objects.filter(item__question__question_set=question_set)
        .values("item__question_id")
        .annotate(n=Count("student_id", distinct=True))
        .values_list("item__question_id", "n")
    )
    return {qid: (graded.get(qid, 0), n) for qid, n in answered.items()}


@dataclass(frozen=True)
class GradingRow:
    """A written question with its grader and how far its grading is: students whose answer
    has a mark, of those who answered."""

    q: Question
    graded: int
    answered: int


def grading_rows(question_set: QuestionSet) -> list[GradingRow]:
    """Who grades what: every written question of the set in order, its grader and progress
    (three queries). The set's page and the API read this one list."""
    hand = list(
        question_set.questions.filter(kind=Question.Kind.WRITTEN)
        .select_related("grader")
        .order_by("position")
    )
    done = progress(question_set) if hand else {}
    return [GradingRow(q, *done.get(q.pk, (0, 0))) for q in hand]


def graders_of(course: Any) -> list[User]:
    """The course's active TAs and instructors, by name: who can be given a question."""
    return list(
        User.objects.filter(
            memberships__course=course,
            memberships__role__in=STAFF_ROLES,
            memberships__is_active=True,
        )
        .distinct()
        .order_by("full_name", "email")
    )
