"""Checkoffs and sign-ups: a set of slots (an assignment's oral checkoff, a presentation session,
the midterm check-in meetings), its slots, and each group's booking with its outcome.

Two invariants are held by the database, not only by the services: a slot's `booked` count never
exceeds its capacity (a CHECK, with the slot row locked while it changes), and a group holds at
most one booking per set (a partial unique index over the bookings that still hold a place: not
cancelled, not sent back for a redo).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from apps.calendar.models import Assignment, CourseEvent, Milestone
from apps.core.models import Course


class CheckoffSet(models.Model):
    class Kind(models.TextChoices):
        ASSIGNMENT = "assignment", "Assignment checkoff"
        PRESENTATION = "presentation", "Presentation"
        CHECKIN = "checkin", "Midterm check-in"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="checkoff_sets")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ASSIGNMENT)
    title = models.CharField(
        max_length=120, help_text="What groups sign up for, e.g. “A1 checkoff”."
    )
    assignment = models.ForeignKey(
        Assignment,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The assignment checked off (assignment checkoffs).",
    )
    event = models.ForeignKey(
        CourseEvent,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The presentation session, when the set belongs to one.",
    )
    milestone = models.ForeignKey(
        Milestone,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The milestone the meetings are about (midterm check-in).",
    )
    book_by = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Groups without a booking by then are listed for a reminder.",
    )
    published_at = models.DateTimeField(
        null=True, blank=True, help_text="Students see and book only published sets."
    )
    reminded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("course_id", "created_at", "pk")
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind="assignment") | Q(assignment__isnull=False),
                name="checkoff_set_assignment_named",
            ),
        ]

    def __str__(self) -> str:
        return self.title


class CheckoffSlot(models.Model):
    set = models.ForeignKey(CheckoffSet, on_delete=models.CASCADE, related_name="slots")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    location = models.CharField(max_length=120, help_text="Room or place, e.g. 521 Cory Hall.")
    capacity = models.PositiveSmallIntegerField(
        default=1, help_text="Groups the slot takes at once."
    )
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The staff member who runs it.",
    )
    booked = models.PositiveSmallIntegerField(
        default=0, help_text="Bookings that hold a place (kept by the services)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("starts_at", "location", "pk")
        indexes = [models.Index(fields=["set", "starts_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_at__gt=F("starts_at")), name="checkoff_slot_ends_after"
            ),
            models.CheckConstraint(
                condition=Q(capacity__gte=1), name="checkoff_slot_capacity_positive"
            ),
            models.CheckConstraint(
                condition=Q(booked__lte=F("capacity")), name="checkoff_slot_never_overbooked"
            ),
            models.UniqueConstraint(
                fields=["set", "location", "starts_at"], name="checkoff_slot_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.set} at {self.starts_at:%Y-%m-%d %H:%M} UTC, {self.location}"

    @property
    def free(self) -> int:
        return max(self.capacity - self.booked, 0)


# A booking holds its set's one place for the group unless cancelled or sent back for a redo.
HOLDS = Q(cancelled_at__isnull=True) & ~Q(outcome="redo")
HOLDS_FROM_SET = Q(bookings__cancelled_at__isnull=True) & ~Q(
    bookings__outcome="redo"
)  # in aggregates over sets


class Booking(models.Model):
    class Attendance(models.TextChoices):
        PENDING = "", "Not recorded"
        PRESENT = "present", "Present"
        NO_SHOW = "no-show", "No-show"

    class Outcome(models.TextChoices):
        NONE = "", "Not recorded"
        PASSED = "passed", "Passed"
        REDO = "redo", "Redo"

    set = models.ForeignKey(CheckoffSet, on_delete=models.CASCADE, related_name="bookings")
    slot = models.ForeignKey(CheckoffSlot, on_delete=models.CASCADE, related_name="bookings")
    group = models.ForeignKey(
        "groups.Group", on_delete=models.CASCADE, related_name="checkoff_bookings"
    )
    booked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attendance = models.CharField(max_length=8, choices=Attendance.choices, blank=True, default="")
    outcome = models.CharField(max_length=8, choices=Outcome.choices, blank=True, default="")
    notes = models.TextField(
        blank=True, help_text="Staff notes on the checkoff (shown to the group)."
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    recorded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("slot__starts_at", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=["set", "group"], condition=HOLDS, name="checkoff_one_booking_per_set"
            ),
            models.UniqueConstraint(
                fields=["slot", "group"],
                condition=Q(cancelled_at__isnull=True),
                name="checkoff_no_double_booking",
            ),
            models.CheckConstraint(
                condition=~Q(outcome="passed") | Q(attendance="present"),
                name="checkoff_pass_needs_presence",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group} in {self.slot}"

    @property
    def holds(self) -> bool:
        return self.cancelled_at is None and self.outcome != self.Outcome.REDO
