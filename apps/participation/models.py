"""Participation events per student (attendance, Ed posts and answers, comments on notes and
slides, check-in meetings), recorded by staff one by one or imported from CSV."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course

KINDS = [
    ("attendance", "Lecture attendance"),
    ("ed-post", "Ed post"),
    ("ed-answer", "Ed answer"),
    ("comment", "Comment on notes or slides"),
    ("checkin", "Check-in meeting"),
    ("other", "Other"),
]


class ParticipationImport(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    filename = models.CharField(max_length=200)
    content = models.BinaryField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    added = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.filename


class ParticipationEvent(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=12, choices=KINDS)
    occurred_on = models.DateField()
    note = models.CharField(max_length=300, blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    source = models.ForeignKey(
        ParticipationImport, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )

    class Meta:
        ordering = ("-occurred_on", "-pk")
        indexes = [models.Index(fields=["course", "student"])]
        constraints = [  # one attendance mark per student and day; other kinds can repeat
            models.UniqueConstraint(
                fields=["course", "student", "occurred_on"],
                condition=models.Q(kind="attendance"),
                name="one_attendance_per_student_day",
            )
        ]

    def __str__(self) -> str:
        return f"{self.student_id} {self.kind} {self.occurred_on}"


class CheckinSession(models.Model):
    """Staff opened check-in for one lecture: a code rotating every 30 s (an HMAC of the secret
    and the time step, so nothing is stored per code) is shown in the room; students enter it
    while the session is open."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    lecture = models.OneToOneField(
        "coursecalendar.Lecture", on_delete=models.CASCADE, related_name="checkin"
    )
    secret = models.CharField(max_length=64)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    opened_at = models.DateTimeField()
    closes_at = models.DateTimeField(help_text="No check-in after this instant.")

    class Meta:
        ordering = ("-opened_at",)
        constraints = [
            models.CheckConstraint(
                condition=models.Q(closes_at__gt=models.F("opened_at")), name="checkin_closes_after"
            )
        ]

    def __str__(self) -> str:
        return f"check-in {self.lecture}"


class Checkin(models.Model):
    """One student's check-in to one lecture (at most one: a unique constraint)."""

    session = models.ForeignKey(CheckinSession, on_delete=models.CASCADE, related_name="checkins")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    at = models.DateTimeField()

    class Meta:
        ordering = ("at",)
        constraints = [
            models.UniqueConstraint(fields=["session", "student"], name="one_checkin_per_lecture")
        ]

    def __str__(self) -> str:
        return f"{self.student_id} at {self.session_id}"
