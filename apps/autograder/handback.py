"""A grader leaves the course staff (`StaffRemoved`, in the roster change's transaction): the
written-grading work given to them and not done goes back, and what they did stays.

What a head TA expects, and what this does:
- **An answer of their split share they have not graded** goes to the question's other graders
  who are still on staff, evenly: each answer to the one with the fewest ungraded answers then
  (never to the answer's own second grader, as one person never grades an answer twice). When
  the only grader left is that answer's second grader, they become its first grader: the second
  grading is dropped, and if they had already marked it, their marks become the marks that count.
  When no grader is left at all, the answer goes to nobody in particular: the set's page shows it
  among the answers "given to nobody (split again)", and any staff member may grade it.
- **An answer they graded** stays theirs in the split, with their marks: the marks count, carry
  their name, and their progress shows it as graded, so each grader's progress still adds up to
  the answers there are.
- **A second grading they have not done** goes to another grader still on staff who is not that
  answer's first grader (the one with the fewest such); with none, the answer is graded once.
  A second grading they did stays, and counts in the agreement.
- **A question given to them** (the set page's grader) goes to "anyone".

Every question touched gets one audit row naming the event (`caused_by`). The handback takes the
set's written-grading lock (`written.lock_written`) before it reads marks, so a mark the leaving
grader saves at the same moment is either in (and kept) or refused (they are no longer staff).
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from apps.autograder.models import AnswerGrader, Question, QuestionSet, RubricMark, SecondMark
from apps.autograder.written import lock_written, rescore
from apps.core.lifecycle import StaffRemoved
from apps.core.models import STAFF_ROLES, Course, Membership, User
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction


def _theirs(course: Course, user_id: int) -> Q:
    return Q(question_set__course=course) & (
        Q(grader_id=user_id) | Q(answer_graders__grader_id=user_id)
    )


def _staff_ids(course: Course, leaving: int) -> set[int]:
    return set(
        Membership.objects.filter(course=course, role__in=STAFF_ROLES, is_active=True)
        .exclude(user_id=leaving)
        .values_list("user_id", flat=True)
    )


@in_callers_transaction
def on_staff_removed(event: StaffRemoved) -> None:
    uid = event.user_id
    set_ids = sorted(
        set(Question.objects.filter(_theirs(event.course, uid)).values_list("question_set_id"))
    )
    for qs in QuestionSet.objects.filter(pk__in=[s for (s,) in set_ids]).order_by("pk"):
        lock_written(qs)
    staff = _staff_ids(event.course, uid)
    names = dict(User.objects.filter(pk__in=staff).values_list("pk", "email"))
    questions = Question.objects.filter(_theirs(event.course, uid)).distinct().order_by("pk")
    for q in questions.select_related("question_set"):
        note = _hand_back(q, uid, staff, names)
        if q.grader_id == uid:
            Question.objects.filter(pk=q.pk).update(grader_id=None)
            note["grader"] = "anyone"
        audit_record(
            actor=event.actor,
            action="grading.handed_back",
            course=event.course,
            obj=q,
            after={**event.caused_by(), **note},
        )


def _give(row: AnswerGrader, eligible: list[int], load: dict[int, int]) -> int | None:
    """Give `row` to the eligible grader holding the fewest (`load`, counted on); None: nobody."""
    if not eligible:
        return None
    g = min(eligible, key=lambda g: (load[g], g))
    row.grader_id = g
    row.save(update_fields=["grader"])
    load[g] += 1
    return g


def _hand_back(q: Question, uid: int, staff: set[int], names: dict[int, str]) -> dict:
    rows = list(AnswerGrader.objects.select_for_update().filter(question=q).order_by("pk"))
    if not rows:
        return {}
    marked = set(RubricMark.objects.filter(item__question=q).values_list("student_id", flat=True))
    second_done = set(
        SecondMark.objects.filter(item__question=q).values_list("student_id", "grader_id")
    )
    first = {r.student_id: r for r in rows if not r.second}
    second = {r.student_id: r for r in rows if r.second}
    others = sorted({r.grader_id for r in rows if r.grader_id != uid and r.grader_id in staff})
    load = dict.fromkeys(others, 0)  # ungraded first answers each holds
    for r in first.values():
        if r.grader_id in load and r.student_id not in marked:
            load[r.grader_id] += 1
    handed: dict[str, int] = defaultdict(int)
    unassigned = promoted = kept = 0
    promote: list[int] = []
    for student_id, r in sorted(first.items(), key=lambda kv: kv[1].pk):
        if r.grader_id != uid:
            continue
        if student_id in marked:
            kept += 1
            continue
        twin = second.get(student_id)
        g = _give(r, [g for g in others if twin is None or g != twin.grader_id], load)
        if g is not None:
            handed[names.get(g, str(g))] += 1
        elif twin is not None and twin.grader_id in load:
            g = twin.grader_id
            twin.delete()
            del second[student_id]
            r.grader_id = g
            r.save(update_fields=["grader"])
            promote.append(student_id)
            promoted += 1
        else:
            r.delete()
            unassigned += 1
    if promote:  # the second grader's own marks, where they gave some, now count
        done = SecondMark.objects.filter(item__question=q, student_id__in=promote)
        RubricMark.objects.bulk_create(
            [
                RubricMark(item_id=m.item_id, student_id=m.student_id, applied_by_id=m.grader_id)
                for m in done
            ],
            ignore_conflicts=True,
        )
        done.delete()
        rescore(q, promote)
    second_load = dict.fromkeys(others, 0)
    for r in second.values():
        if r.grader_id in second_load and (r.student_id, r.grader_id) not in second_done:
            second_load[r.grader_id] += 1
    seconds_moved = seconds_released = 0
    for student_id, r in sorted(second.items(), key=lambda kv: kv[1].pk):
        if r.grader_id != uid or (student_id, uid) in second_done:
            continue
        head = first.get(student_id)
        if _give(r, [g for g in others if head is None or g != head.grader_id], second_load):
            seconds_moved += 1
        else:
            r.delete()
            seconds_released += 1
    return {
        "handed": dict(handed),
        "promoted": promoted,
        "unassigned": unassigned,
        "kept_graded": kept,
        "second_reassigned": seconds_moved,
        "second_released": seconds_released,
    }


def preview(course: Course, user_id: int) -> list[str]:
    """What `on_staff_removed` would do, a sentence per question (the roster preview shows it)."""
    out = []
    staff = _staff_ids(course, user_id)
    for q in (
        Question.objects.filter(_theirs(course, user_id))
        .distinct()
        .select_related("question_set")
        .order_by("question_set__key", "position", "pk")
    ):
        marked = set(
            RubricMark.objects.filter(item__question=q).values_list("student_id", flat=True)
        )
        rows = list(AnswerGrader.objects.filter(question=q, grader_id=user_id))
        todo = sum(1 for r in rows if not r.second and r.student_id not in marked)
        done = sum(1 for r in rows if not r.second) - todo
        mine2 = {r.student_id for r in rows if r.second}
        done2 = set(
            SecondMark.objects.filter(
                item__question=q, grader_id=user_id, student_id__in=mine2
            ).values_list("student_id", flat=True)
        )
        others = (
            AnswerGrader.objects.filter(question=q, grader_id__in=staff)
            .values("grader_id")
            .distinct()
            .count()
        )
        parts = []
        if todo:
            to = "the other graders" if others else "nobody in particular (split it again)"
            parts.append(f"{todo} ungraded answer{'s' if todo != 1 else ''} go to {to}")
        if done:
            parts.append(f"{done} they graded keep their marks")
        if len(mine2 - done2):
            parts.append(f"{len(mine2 - done2)} second grading(s) they have not done are released")
        if q.grader_id == user_id:
            parts.append("the question goes to anyone")
        if parts:
            out.append(f"{q.question_set.key} / {q.key}: {'; '.join(parts)}.")
    return out


def unfinished_work_of_non_staff(course_id: int) -> list[str]:
    """No ungraded split share, pending second grading or written question is held by someone
    not on the course staff."""
    staff = set(
        Membership.objects.filter(
            course_id=course_id, role__in=STAFF_ROLES, is_active=True
        ).values_list("user_id", flat=True)
    )
    rows = list(
        AnswerGrader.objects.filter(question__question_set__course_id=course_id)
        .exclude(grader_id__in=staff)
        .select_related("grader", "question")
    )
    out = [
        f"{q.key} is given to {getattr(q.grader, 'email', '?')}, who is not on the staff"
        for q in Question.objects.filter(question_set__course_id=course_id, grader__isnull=False)
        .exclude(grader_id__in=staff)
        .select_related("grader")
    ]
    if not rows:
        return out
    qids = {r.question_id for r in rows}
    marked = set(
        RubricMark.objects.filter(item__question_id__in=qids).values_list(
            "item__question_id", "student_id"
        )
    )
    seconds = set(
        SecondMark.objects.filter(item__question_id__in=qids).values_list(
            "item__question_id", "student_id", "grader_id"
        )
    )
    for r in rows:
        if r.second and (r.question_id, r.student_id, r.grader_id) not in seconds:
            out.append(f"{r.grader.email} holds a pending second grading on {r.question.key}")
        elif not r.second and (r.question_id, r.student_id) not in marked:
            out.append(f"{r.grader.email} holds an ungraded answer of {r.question.key}")
    return out
