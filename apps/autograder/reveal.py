"""Who may show students' names again on an anonymously graded set: instructors, and the head
TAs the course file names when its `policy.anonymous_grading.reveal_names` is `head_tas`. Every
reveal is an audit row ("grading.names_shown"), listed on the set's page."""

from __future__ import annotations

from apps.autograder.models import GradingPolicy, QuestionSet
from apps.core.models import AuditEvent, Course, User
from apps.core.permissions import is_instructor, is_staff

REVEAL_REFUSED = (
    "Only the course's instructors may show students' names again on an anonymously graded set"
)


def policy_of(course: Course) -> GradingPolicy:
    """The course's grading policy (the course file's), or the defaults when it has none."""
    found = GradingPolicy.objects.filter(course=course).first()
    return found if found is not None else GradingPolicy(course=course)


def may_reveal(user: User, course: Course) -> bool:
    """Instructors may show names again; head TAs too when the course file allows it."""
    if is_instructor(user, course):
        return True
    policy = policy_of(course)
    if policy.reveal_names != GradingPolicy.Reveal.HEAD_TAS or not is_staff(user, course):
        return False
    return user.email.strip().lower() in {e.strip().lower() for e in policy.head_tas}


def reveal_refusal(course: Course) -> str:
    policy = policy_of(course)
    if policy.reveal_names == GradingPolicy.Reveal.HEAD_TAS:
        return f"{REVEAL_REFUSED} (and its head TAs, as the course file allows)."
    return f"{REVEAL_REFUSED}; the course file's policy.anonymous_grading may allow head TAs."


def name_reveals(question_set: QuestionSet, limit: int = 20) -> list[AuditEvent]:
    """The set's "names shown again" audit rows, newest first (the set's page lists them)."""
    return list(
        AuditEvent.objects.filter(
            action="grading.names_shown",
            object_type=QuestionSet._meta.label_lower,
            object_id=str(question_set.pk),
        )
        .select_related("actor")
        .order_by("-created_at", "-id")[:limit]
    )
