"""Fair grading's records: the course's grading policy (who may show names again, when practice
shows a solution), which grader grades which written answer (a split, with overlap answers
graded twice) and a second grader's own marks on an overlap answer.

The marks that count stay `RubricMark` (one row per rubric item and student): a second grading
of an overlap answer is its own rows, keyed by grader, and never reaches a grade. Agreement is
read by comparing the two (`apps.autograder.splitting.agreement`).
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models

from apps.core.models import Course


class GradingPolicy(models.Model):
    """The course file's `policy.anonymous_grading` and `policy.practice`; a course without a
    row has the defaults (`apps.autograder.fairgrading.policy_of`)."""

    class Reveal(models.TextChoices):
        INSTRUCTORS = "instructors", "Instructors only"
        HEAD_TAS = "head_tas", "Instructors and the head TAs"

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="grading_policy")
    reveal_names = models.CharField(
        max_length=12,
        choices=Reveal.choices,
        default=Reveal.INSTRUCTORS,
        help_text="Who may show students' names again on an anonymously graded set.",
    )
    head_tas = models.JSONField(
        default=list,
        blank=True,
        help_text="E-mails of the head TAs (they may show names again when reveal_names is "
        "head_tas).",
    )
    practice_solution_after = models.PositiveSmallIntegerField(
        default=3,
        validators=[MaxValueValidator(50)],
        help_text="Wrong checks of one practice variant after which its correct value and worked "
        "solution are shown (0: only when the student asks).",
    )

    def __str__(self) -> str:
        return f"grading policy of {self.course_id}"


class AnswerGrader(models.Model):
    """Who grades one student's answer to a written question. Each answer of a split question
    has one first grader (whose marks count) and, for an overlap answer, a second grader who
    grades it independently (`second`), never seeing the first's marks."""

    question = models.ForeignKey(
        "autograder.Question", on_delete=models.CASCADE, related_name="answer_graders"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    grader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    second = models.BooleanField(
        default=False,
        help_text="An overlap answer's second, independent grading (its marks never count).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question", "student", "second"], name="one_grader_per_answer_and_round"
            ),
            models.UniqueConstraint(
                fields=["question", "student", "grader"], name="grader_once_per_answer"
            ),
        ]
        indexes = [models.Index(fields=["question", "grader"])]

    def __str__(self) -> str:
        round_ = " (2nd)" if self.second else ""
        return f"{self.question_id}/{self.student_id} → {self.grader_id}{round_}"


class SecondMark(models.Model):
    """A rubric item a second grader applied to an overlap answer: its own row keyed by grader,
    beside (never instead of) the first grader's `RubricMark`."""

    item = models.ForeignKey(
        "autograder.RubricItem", on_delete=models.CASCADE, related_name="second_marks"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    grader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    applied_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "student", "grader"], name="second_mark_once_per_grader"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_id} on {self.student_id} by {self.grader_id}"
