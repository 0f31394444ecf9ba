"""What happens when: lectures, recess days, assignments and project milestones.

Every instant is an aware UTC datetime; pages convert to the course's time zone. A date in the
course file becomes `Course.due_time` (deadlines) or `Course.release_time` (releases) local time.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from apps.core.models import Course

REVISION_HELP = "Bumped on every change of time or title: the iCal SEQUENCE of the event."


class Lecture(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lectures")
    number = models.PositiveSmallIntegerField(help_text="L1, L2, … in syllabus order.")
    title = models.CharField(max_length=200)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    is_guest = models.BooleanField(default=False, help_text="Given by a guest speaker.")
    part = models.CharField(max_length=120, blank=True, help_text="Syllabus part, e.g. Part 1.")
    notes = models.CharField(max_length=200, blank=True)
    revision = models.PositiveIntegerField(default=0, help_text=REVISION_HELP)

    class Meta:
        ordering = ("course_id", "starts_at", "number")
        constraints = [
            models.UniqueConstraint(fields=["course", "number"], name="lecture_number_unique"),
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="lecture_ends_after"
            ),
        ]

    def __str__(self) -> str:
        return f"L{self.number}. {self.title}"


class RecessDay(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="recess_days")
    date = models.DateField()
    note = models.CharField(max_length=120, default="No class")

    class Meta:
        ordering = ("course_id", "date")
        constraints = [models.UniqueConstraint(fields=["course", "date"], name="recess_unique")]

    def __str__(self) -> str:
        return f"{self.date}: {self.note}"


class Assignment(models.Model):
    """A group assignment (A1–A5). Slack days and exceptions move its deadline per student."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    code = models.CharField(max_length=16, help_text="Short code, e.g. A1.")
    title = models.CharField(max_length=200)
    release_at = models.DateTimeField()
    due_at = models.DateTimeField(help_text="Base deadline, before slack days and exceptions.")
    accepts_slack = models.BooleanField(default=True)
    revision = models.PositiveIntegerField(default=0, help_text=REVISION_HELP)

    class Meta:
        ordering = ("course_id", "due_at", "code")
        constraints = [
            models.UniqueConstraint(fields=["course", "code"], name="assignment_code_unique"),
            models.CheckConstraint(
                condition=models.Q(due_at__gt=models.F("release_at")),
                name="assignment_due_after_release",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.title}"


class Milestone(models.Model):
    """A project milestone from the syllabus table. Slack days never apply to milestones."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="milestones")
    key = models.SlugField(max_length=60, help_text="Stable identifier, e.g. group-formation.")
    name = models.CharField(max_length=200)
    due_at = models.DateTimeField()
    notes = models.CharField(max_length=300, blank=True)
    tracked = models.BooleanField(
        default=True, help_text="Each group records a submission (a link) for it."
    )
    revision = models.PositiveIntegerField(default=0, help_text=REVISION_HELP)
    sources_required = models.BooleanField(
        default=False,
        help_text="Groups must say which sources and AI assistants they used, and where, when "
        "they record it.",
    )

    class Meta:
        ordering = ("course_id", "due_at", "key")
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="milestone_key_unique")
        ]

    def __str__(self) -> str:
        return self.name


class CourseEvent(models.Model):
    """Something that happens over [starts_at, ends_at): a release, a presentation session, the
    poster session, office hours. Never due: no reminder, no lateness, never a deadline row."""

    class Kind(models.TextChoices):
        RELEASE = "release", "Release"
        SESSION = "session", "Session"
        MEETING = "meeting", "Meeting"
        OFFICE_HOURS = "office-hours", "Office hours"
        OTHER = "other", "Event"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="events")
    key = models.SlugField(max_length=80, help_text="Stable identifier, e.g. poster-session.")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OTHER)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    all_day = models.BooleanField(default=False, help_text="Shown as a date, not a time.")
    location = models.CharField(max_length=200, blank=True)
    notes = models.CharField(max_length=300, blank=True)
    revision = models.PositiveIntegerField(default=0, help_text=REVISION_HELP)

    class Meta:
        ordering = ("course_id", "starts_at", "key")
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="course_event_key_unique"),
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")),
                name="course_event_ends_after",
            ),
        ]

    def __str__(self) -> str:
        return self.name


def _feed_key() -> str:
    return secrets.token_hex(6)


def _feed_secret() -> str:
    return secrets.token_urlsafe(24)


class CalendarSettings(models.Model):
    """A person's calendar in one course: the secret feed URL and which reminders they want.

    The feed token is `key` (12 hex characters, looked up by index) followed by `secret`
    (compared with `hmac.compare_digest`, so the comparison takes the same time however much
    of a guess is right). Regenerating replaces both; revoking clears them, and the old URL is
    a plain 404 at once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    feed_key = models.CharField(max_length=12, null=True, blank=True, unique=True)
    feed_secret = models.CharField(max_length=64, blank=True)
    feed_created_at = models.DateTimeField(null=True, blank=True)
    reminders_off = models.JSONField(
        default=list, blank=True, help_text="Kinds of reminder this person turned off."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "course"], name="calendar_settings_once")
        ]

    def __str__(self) -> str:
        return f"calendar of user {self.user_id} in course {self.course_id}"

    @property
    def feed_token(self) -> str | None:
        return f"{self.feed_key}{self.feed_secret}" if self.feed_key else None

    def new_token(self) -> None:
        self.feed_key, self.feed_secret = _feed_key(), _feed_secret()


class Reminder(models.Model):
    """One reminder e-mail, claimed before it is sent. The unique constraint makes it at most
    once per (person, item, offset, deadline): a task run twice, or by two workers at once,
    finds the row already claimed and sends nothing."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item_uid = models.CharField(max_length=200, help_text="The calendar event's UID.")
    offset_hours = models.PositiveIntegerField()
    due_at = models.DateTimeField(help_text="The deadline the reminder was for.")
    claimed_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # Database defaults: the claim is a raw multi-row INSERT that names only the claim's columns.
    attempts = models.PositiveSmallIntegerField(
        default=0, db_default=0, help_text="Sends the SMTP server refused or broke off."
    )
    retry_at = models.DateTimeField(
        null=True, blank=True, help_text="The job sweep sends it again from this moment."
    )
    failed_at = models.DateTimeField(
        null=True, blank=True, help_text="Given up after the last attempt; see last_error."
    )
    last_error = models.CharField(max_length=300, blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "item_uid", "offset_hours", "due_at"], name="reminder_once"
            )
        ]
        indexes = [
            models.Index(fields=["course", "due_at"]),
            # The sweep's question: claimed, not sent, not given up.
            models.Index(
                fields=["claimed_at"],
                name="reminder_unsent",
                condition=models.Q(sent_at__isnull=True, failed_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_uid} −{self.offset_hours} h for user {self.user_id}"
