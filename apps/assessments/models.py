"""Pre/post assessments: one question set given twice (pre and post), responses keyed by a
random participant ID, never a name. The ID → person map (`IdentityLink`) is its own table,
read by instructors only, and can be destroyed; every figure is computed from participant IDs, so
the analytics keep working after it is gone."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.autograder.models import QuestionSet
from apps.core.models import Course

CONSENT = (
    "Research participation notice. This quiz is part of a study of how this course teaches ML "
    "systems. Your answers are identified only by a random participant ID; your name is never "
    "stored with them. Taking part is voluntary: you may skip questions or stop at any time. "
    "If you do not want your answers used in research, tick NO RESEARCH: you still get your score, "
    "and your answers are left out of every figure and export."
)
# The seed's expected score bands (% of participants) for 0–3, 4–6, 7–9, 10–12 of 12 points.
EXPECTED_BANDS = {"pre": [15, 45, 30, 10], "post": [2, 15, 45, 38]}


class Assessment(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assessments")
    question_set = models.ForeignKey(
        QuestionSet,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The quiz given before and after.",
    )
    title = models.CharField(max_length=200)
    time_limit_minutes = models.PositiveSmallIntegerField(
        default=5, help_text="Enforced on the server."
    )
    consent_text = models.TextField(
        default=CONSENT, help_text="Shown, and acknowledged, before the quiz."
    )
    expected = models.JSONField(
        default=dict,
        blank=True,
        help_text="Expected band percentages {pre: [...], post: [...]} and effect size d.",
    )
    published_at = models.DateTimeField(
        null=True, blank=True, help_text="Students see the aggregate report from then."
    )
    identities_destroyed_at = models.DateTimeField(null=True, blank=True)
    retention_warned_at = models.DateTimeField(
        null=True, blank=True, help_text="When instructors were told the raw data goes in 30 days."
    )
    raw_purged_at = models.DateTimeField(
        null=True, blank=True, help_text="When the raw imports and the ID map were deleted."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("course_id", "created_at", "pk")

    def __str__(self) -> str:
        return self.title


class Administration(models.Model):
    class Phase(models.TextChoices):
        PRE = "pre", "Before (pre)"
        POST = "post", "After (post)"

    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="administrations"
    )
    phase = models.CharField(max_length=4, choices=Phase.choices)
    opens_at = models.DateTimeField(
        null=True, blank=True, help_text="The in-app form opens (empty: closed)."
    )
    closes_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("assessment_id", "phase")
        constraints = [
            models.UniqueConstraint(fields=["assessment", "phase"], name="assessment_one_per_phase")
        ]

    def __str__(self) -> str:
        return f"{self.assessment} ({self.phase})"


class Participant(models.Model):
    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="participants"
    )
    code = models.CharField(
        max_length=32, help_text="The participant ID (random 6 digits, or imported)."
    )

    class Meta:
        ordering = ("assessment_id", "code")
        constraints = [
            models.UniqueConstraint(fields=["assessment", "code"], name="participant_code_once")
        ]

    def __str__(self) -> str:
        return self.code


class IdentityLink(models.Model):
    """Who a participant ID is: instructors only, never joined into analytics; destroyable."""

    participant = models.OneToOneField(
        Participant, on_delete=models.CASCADE, related_name="identity"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "user"], name="identity_once")
        ]

    def __str__(self) -> str:
        return f"{self.participant} → user {self.user_id}"


class Response(models.Model):
    class Status(models.TextChoices):
        STARTED = "started", "Started"
        SUBMITTED = "submitted", "Submitted"
        LATE = "late", "Refused: past the time limit"

    administration = models.ForeignKey(
        Administration, on_delete=models.CASCADE, related_name="responses"
    )
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="responses")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SUBMITTED)
    source = models.CharField(max_length=10, default="form")
    opted_out = models.BooleanField(
        default=False, help_text="NO RESEARCH: scored, left out of every aggregate."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    answers = models.JSONField(
        default=dict, blank=True, help_text="{question key: [raw answer per part]}"
    )
    scores = models.JSONField(
        default=dict, blank=True, help_text="{question key: {points, rule, misconception …}}"
    )
    total = models.FloatField(null=True, blank=True)
    limit_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="This attempt's own time limit, fixed when it starts (extended time included); "
        "never exported with the research data.",
    )

    class Meta:
        ordering = ("administration_id", "participant_id")
        constraints = [
            models.UniqueConstraint(
                fields=["administration", "participant"], name="response_once_per_phase"
            ),
            models.CheckConstraint(
                condition=~Q(status="submitted") | Q(total__isnull=False),
                name="response_submitted_is_scored",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant} {self.administration.phase}"


class ResponseImport(models.Model):
    """A CSV of responses for one phase: previewed (every problem by row and column), then
    committed from the stored file, all or nothing."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="imports")
    phase = models.CharField(max_length=4, choices=Administration.Phase.choices)
    filename = models.CharField(max_length=200)
    data = models.BinaryField()
    report = models.JSONField(default=dict)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.filename} ({self.phase})"


class TimeAccommodation(models.Model):
    """Extended time on a course's timed assessments for one student: the limit times
    `multiplier`, plus `extra_minutes`. Staff set it; the server enforces each student's own
    limit from the moment they start."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    multiplier = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=1,
        help_text="1.5 = time and a half; 2 = double time (1 to 4).",
    )
    extra_minutes = models.PositiveSmallIntegerField(
        default=0, help_text="Minutes added after the multiplier (0 to 120)."
    )
    note = models.CharField(max_length=200, blank=True, help_text="E.g. the DSP letter's date.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "student"], name="one_time_accommodation"),
            models.CheckConstraint(
                condition=Q(multiplier__gte=1, multiplier__lte=4) & Q(extra_minutes__lte=120),
                name="time_accommodation_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.student} ×{self.multiplier} +{self.extra_minutes} min"


PROGRAMS = [
    ("undergrad", "Undergraduate"),
    ("ms", "Master's"),
    ("phd", "PhD"),
    ("other", "Other"),
    ("", "Prefer not to say"),
]
EXPERIENCE = [
    ("0", "None"),
    ("1-2", "1–2 years"),
    ("3-5", "3–5 years"),
    ("6+", "6 years or more"),
    ("", "Prefer not to say"),
]
PRIOR = [("yes", "Yes"), ("no", "No"), ("", "Prefer not to say")]


class Demographics(models.Model):
    """The study's separate, voluntary demographics form: linked to the participant ID only
    (never to a person, never on the quiz), and only for a participant who consented."""

    participant = models.OneToOneField(
        Participant, on_delete=models.CASCADE, related_name="demographics"
    )
    program = models.CharField(max_length=10, choices=PROGRAMS, blank=True)
    experience = models.CharField(
        max_length=4,
        choices=EXPERIENCE,
        blank=True,
        verbose_name="ML-systems experience",
    )
    prior_course = models.CharField(
        max_length=3,
        choices=PRIOR,
        blank=True,
        verbose_name="Took a systems or ML course before",
    )
    submitted_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"demographics of {self.participant_id}"
