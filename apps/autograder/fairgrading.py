"""Fair written grading: who may show names again on an anonymously graded set, a written
question's answers split among several graders (with an overlap graded twice, independently),
and how far each grader is and how well the two graders of an overlap agree.

The grade that counts is the first grader's: their marks are the question's `RubricMark` rows,
which feed the grades, results, exports and gradebook as before. A second grader's marks are
`SecondMark` rows keyed by grader and never reach a grade; the instructor reads the agreement
and the answers the two graded differently, and resolves a disagreement by changing the marks
that count on the written-answer page (which re-scores at once).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction

from apps.autograder import splitting
from apps.autograder.models import (
    Answer,
    AnswerGrader,
    Question,
    QuestionSet,
    RubricItem,
    RubricMark,
    SecondMark,
)
from apps.autograder.written import (
    answer_key,
    lock_written,
    marks_audited,
    marks_checked,
    score_of,
    still_staff,
)
from apps.core.errors import DomainError, NotAllowed
from apps.core.models import STAFF_ROLES, Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record

# --- several graders per question ------------------------------------------------------------


def answered_students(question: Question) -> list[int]:
    """The students who answered a written question, numbered by the order their answers were
    first saved (answer 1 is the first): the numbering a split's ranges read."""
    return list(
        Answer.objects.filter(question=question, part=0)
        .exclude(text="", raw="")
        .order_by("pk")
        .values_list("student_id", flat=True)
    )


@dataclass(frozen=True)
class SplitResult:
    answers: int
    shares: list[tuple[int, int, int]]  # (grader id, first answer, last answer)
    overlap: int


def split_save(
    *,
    actor: User,
    question: Question,
    grader_ids: list[int],
    ranges: list[str] | None = None,
    overlap: int = 0,
) -> SplitResult:
    """Split a written question's answers among `grader_ids` (in that order): evenly, or by
    `ranges` (one per grader, e.g. "1-12", answers numbered as `answered_students`); `overlap`
    answers, spread over the list, are graded a second time by the next grader in the list,
    independently. Replaces the question's earlier split; locks the question; audited. The
    first grader's marks count (module docstring)."""
    course = question.question_set.course
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's staff split a question among graders.")
    if question.kind != Question.Kind.WRITTEN:
        raise DomainError("Only written questions are graded by hand.", field="graders")
    graders = list(dict.fromkeys(grader_ids))
    if not graders:
        raise DomainError("Choose at least one grader.", field="graders")
    staff = set(
        Membership.objects.filter(
            course=course, user_id__in=graders, role__in=STAFF_ROLES, is_active=True
        ).values_list("user_id", flat=True)
    )
    if staff != set(graders):
        raise DomainError("Choose the course's TAs or instructors only.", field="graders")
    if overlap < 0:
        raise DomainError("The overlap is 0 or more answers.", field="overlap")
    if overlap and len(graders) < 2:
        raise DomainError("Double grading needs at least two graders.", field="overlap")
    with transaction.atomic():
        Question.objects.select_for_update().filter(pk=question.pk).first()
        students = answered_students(question)
        n = len(students)
        if n == 0:
            raise DomainError("Nobody has answered this question yet: nothing to split.")
        # Each step's refusal names its own field ("Answer 7 is in two ranges; use the overlap
        # …" is about the ranges, though it says "overlap").
        try:
            if ranges:
                if len(ranges) != len(graders):
                    raise ValueError(
                        f"Give one range per grader ({len(graders)}), in the graders' order."
                    )
                spans = splitting.parse_ranges(ranges, n)
            else:
                spans = splitting.split_even(n, len(graders))
        except ValueError as exc:
            raise DomainError(str(exc), field="ranges") from None
        try:
            picks = splitting.overlap_picks(n, overlap)
        except ValueError as exc:
            raise DomainError(str(exc), field="overlap") from None
        owner = {}
        for g, (a, b) in zip(graders, spans, strict=True):
            for i in range(a, b + 1):
                owner[i] = g
        rows = [
            AnswerGrader(question=question, student_id=students[i - 1], grader_id=owner[i])
            for i in range(1, n + 1)
        ]
        for i in picks:
            first = graders.index(owner[i])
            rows.append(
                AnswerGrader(
                    question=question,
                    student_id=students[i - 1],
                    grader_id=graders[(first + 1) % len(graders)],
                    second=True,
                )
            )
        before = sorted(
            AnswerGrader.objects.filter(question=question)
            .values_list("grader_id", "second")
            .distinct()
        )
        AnswerGrader.objects.filter(question=question).delete()
        AnswerGrader.objects.bulk_create(rows)
        old_grader = question.grader_id
        Question.objects.filter(pk=question.pk).update(grader_id=None)
        question.grader_id = None
        shares = [(g, a, b) for g, (a, b) in zip(graders, spans, strict=True)]
        audit_record(
            actor=actor,
            action="grading.split",
            course=course,
            obj=question,
            before={"graders": [list(x) for x in before], "grader": old_grader},
            after={"shares": [list(s) for s in shares], "overlap": len(picks), "answers": n},
        )
    return SplitResult(answers=n, shares=shares, overlap=len(picks))


def share_of(question: Question, user: User) -> tuple[set[int], set[int]]:
    """(students whose answer `user` grades first, students whose answer they grade second)."""
    first: set[int] = set()
    second: set[int] = set()
    for student_id, is_second in AnswerGrader.objects.filter(
        question=question, grader=user
    ).values_list("student_id", "second"):
        (second if is_second else first).add(student_id)
    return first, second


def second_marks_apply(
    *,
    actor: User,
    question: Question,
    student_ids: list[int],
    add: list[int] = (),  # type: ignore[assignment]
    remove: list[int] = (),  # type: ignore[assignment]
) -> int:
    """A second grader marks overlap answers given to them: their own `SecondMark` rows, which
    never change a grade (the first grader's marks count). Refused for any answer that is not
    theirs to grade second. Audited. Returns how many answers were touched."""
    items = marks_checked(actor, question, student_ids, add, remove)
    wanted = set(student_ids)
    with transaction.atomic():
        lock_written(question.question_set)
        still_staff(actor, question.question_set.course)
        mine = set(
            AnswerGrader.objects.filter(
                question=question, grader=actor, second=True, student_id__in=wanted
            ).values_list("student_id", flat=True)
        )
        if mine != wanted:
            raise NotAllowed(
                f"{len(wanted - mine)} of those answers are not given to you for second grading."
            )
        SecondMark.objects.bulk_create(
            [SecondMark(item_id=i, student_id=s, grader=actor) for i in add for s in mine],
            ignore_conflicts=True,
        )
        if remove:
            SecondMark.objects.filter(
                item_id__in=remove, student_id__in=mine, grader=actor
            ).delete()
        marks_audited(actor, "written.second_marked", question, len(mine), items, add, remove)
    return len(mine)


@dataclass
class GraderProgress:
    """One grader's share of a split question and how far they are."""

    grader: User
    share: int = 0
    graded: int = 0
    second_share: int = 0
    second_graded: int = 0


@dataclass(frozen=True)
class Disagreement:
    """An overlap answer its two graders scored differently: the first grader's score counts
    until the instructor changes the marks on the written-answer page."""

    question: Question
    student_id: int
    number: int  # the answer's number in the split (1…n, as the ranges count)
    first: float
    second: float
    first_grader: User | None
    second_grader: User

    @property
    def key(self) -> str:
        """The answer's key, as the written page and API take it (no id while names hide)."""
        return answer_key(self.question.question_set, self.student_id)


@dataclass
class SplitView:
    """A split question as the set's page and the API show it."""

    question: Question
    graders: list[GraderProgress] = field(default_factory=list)
    unassigned: int = 0
    agreement: splitting.Agreement | None = None
    disagreements: list[Disagreement] = field(default_factory=list)


def split_views(question_set: QuestionSet, *, with_agreement: bool) -> dict[int, SplitView]:
    """{question id: its split} for the set's split written questions, with each grader's
    progress; with `with_agreement` (instructors) the agreement of the overlap answers and the
    answers graded differently. A fixed number of queries whatever the size."""
    rows = list(
        AnswerGrader.objects.filter(question__question_set=question_set).select_related("grader")
    )
    if not rows:
        return {}
    qids = {r.question_id for r in rows}
    questions = {q.pk: q for q in Question.objects.filter(pk__in=qids)}
    for q in questions.values():
        q.question_set = question_set  # the answers' keys read it (no query per answer)
    marked: dict[int, set[int]] = defaultdict(set)  # question → students with a counted mark
    first_items: dict[tuple[int, int], list[RubricItem]] = defaultdict(list)
    items = {
        i.pk: i for i in RubricItem.objects.filter(question_id__in=qids).order_by("position", "pk")
    }
    for item_id, student_id in RubricMark.objects.filter(item__question_id__in=qids).values_list(
        "item_id", "student_id"
    ):
        item = items[item_id]
        marked[item.question_id].add(student_id)
        first_items[(item.question_id, student_id)].append(item)
    second_items: dict[tuple[int, int, int], list[RubricItem]] = defaultdict(list)
    for item_id, student_id, grader_id in SecondMark.objects.filter(
        item__question_id__in=qids
    ).values_list("item_id", "student_id", "grader_id"):
        second_items[(items[item_id].question_id, student_id, grader_id)].append(items[item_id])
    answered: dict[int, set[int]] = defaultdict(set)
    number: dict[tuple[int, int], int] = {}  # (question, student) → the answer's number 1…n
    for qid, student_id in (
        Answer.objects.filter(question_id__in=qids, part=0)
        .exclude(text="", raw="")
        .order_by("pk")
        .values_list("question_id", "student_id")
    ):
        answered[qid].add(student_id)
        number[(qid, student_id)] = len(answered[qid])
    users = {r.grader_id: r.grader for r in rows}
    first_of = {(r.question_id, r.student_id): r.grader for r in rows if not r.second}
    out: dict[int, SplitView] = {}
    by_grader: dict[tuple[int, int], GraderProgress] = {}
    assigned: dict[int, set[int]] = defaultdict(set)
    pairs: dict[int, list[tuple[int, int]]] = defaultdict(list)  # question → (student, grader)
    for r in sorted(rows, key=lambda r: (r.grader.full_name, r.grader.email)):
        view = out.setdefault(r.question_id, SplitView(question=questions[r.question_id]))
        gp = by_grader.get((r.question_id, r.grader_id))
        if gp is None:
            gp = by_grader[(r.question_id, r.grader_id)] = GraderProgress(grader=r.grader)
            view.graders.append(gp)
        if r.second:
            gp.second_share += 1
            gp.second_graded += bool(second_items.get((r.question_id, r.student_id, r.grader_id)))
            pairs[r.question_id].append((r.student_id, r.grader_id))
        else:
            gp.share += 1
            gp.graded += r.student_id in marked[r.question_id]
            assigned[r.question_id].add(r.student_id)
    for qid, view in out.items():
        view.unassigned = len(answered[qid] - assigned[qid])
        if not with_agreement:
            continue
        q = view.question
        scored = []
        for student_id, grader_id in pairs[qid]:
            first = first_items.get((qid, student_id))
            second = second_items.get((qid, student_id, grader_id))
            if not first or not second:
                continue  # graded twice only once both graders marked it
            a, b = score_of(q, first), score_of(q, second)
            scored.append((a, b))
            if abs(a - b) > 1e-9:
                view.disagreements.append(
                    Disagreement(
                        question=q,
                        student_id=student_id,
                        number=number.get((qid, student_id), 0),
                        first=a,
                        second=b,
                        first_grader=first_of.get((qid, student_id)),
                        second_grader=users[grader_id],
                    )
                )
        view.disagreements.sort(key=lambda d: d.number)
        step = splitting.rubric_step([i.points for i in items.values() if i.question_id == qid])
        view.agreement = splitting.agreement(scored, step)
    return out


def staff_of(course: Course) -> list[User]:
    return list(
        User.objects.filter(
            memberships__course=course,
            memberships__role__in=[Role.TA, Role.INSTRUCTOR],
            memberships__is_active=True,
        ).order_by("full_name", "email")
    )


def questions_shared_with(question_set: QuestionSet, user: User) -> set[int]:
    """The set's written questions with answers given to `user` (first or second)."""
    return set(
        AnswerGrader.objects.filter(question__question_set=question_set, grader=user)
        .values_list("question_id", flat=True)
        .distinct()
    )
