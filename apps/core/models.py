"""People, courses, roles in a course, and the append-only audit trail."""

from __future__ import annotations

import zoneinfo
from typing import Any, ClassVar

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from apps.core.emails import canonical_email


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra: Any) -> User:
        if not email:
            raise ValueError("Every user needs an email address.")
        user = self.model(email=canonical_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra)

    def get_by_natural_key(self, username: str | None) -> User:
        # E-mails are stored in their canonical form; log-in accepts any spelling of one.
        return self.get(email=canonical_email(username or ""))

    def by_email(self, raw: str) -> models.QuerySet[User]:
        """The account (0 or 1) whose e-mail is `raw` in any spelling of the same mailbox."""
        return self.filter(email=canonical_email(raw))


class User(AbstractBaseUser, PermissionsMixin):
    """A person. Logs in with their email (case-insensitive, unique).

    `is_staff` means access to the Django admin only; course roles (instructor, TA, student)
    live in `Membership`. Users are never deleted, only deactivated, so history stays.
    """

    email = models.EmailField(
        "email address",
        unique=True,
        help_text="Used to log in; stored in one spelling (trimmed, lower case, no trailing dot).",
    )
    full_name = models.CharField(max_length=200, blank=True, help_text="As shown to staff.")
    sid = models.CharField(
        "student ID",
        max_length=32,
        blank=True,
        help_text="University student ID (SID), used to match roster and Gradescope exports.",
    )
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False, help_text="May log in to the Django admin.")
    is_demo = models.BooleanField(
        default=False, help_text="Created by the demo loader; never a real person."
    )
    date_joined = models.DateTimeField(default=timezone.now)

    objects: ClassVar[UserManager] = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = ["full_name"]

    class Meta:
        ordering = ("full_name", "email")
        constraints = [
            models.UniqueConstraint(Lower("email"), name="user_email_ci_unique"),
            models.UniqueConstraint(
                fields=["sid"], condition=~models.Q(sid=""), name="user_sid_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.full_name or self.email

    def clean(self) -> None:
        super().clean()
        self.email = canonical_email(self.email)

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Every path that makes or changes an account (roster, LMS, sign-on, admin, demo) stores
        # one spelling per mailbox, so the unique index on `email` holds for the person.
        self.email = canonical_email(self.email)
        super().save(*args, **kwargs)

    def get_full_name(self) -> str:
        return self.full_name or self.email

    def get_short_name(self) -> str:
        return self.full_name.split(" ")[0] if self.full_name else self.email


def validate_timezone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"{value!r} is not an IANA time zone (e.g. America/Los_Angeles).")


hhmm = RegexValidator(r"^([01]\d|2[0-3]):[0-5]\d$", "Use 24-hour HH:MM, e.g. 23:59.")


class Course(models.Model):
    """A course offering and its policy values.

    Policy values are the course's numbers for the rules in `domain-rules.md` (group size, slack
    days, scribing, reviews, cut-offs). They come from the course file and staff may edit them in
    the admin; no rule hard-codes them.
    """

    code = models.SlugField(
        max_length=40, unique=True, help_text="Short stable identifier, e.g. ee290-sp26."
    )
    number = models.CharField(
        max_length=40, blank=True, help_text="Catalog number(s), e.g. EE 290 / 194."
    )
    title = models.CharField(max_length=200)
    term = models.CharField(max_length=40, help_text="e.g. Spring 2026.")
    calendar_shift_days = models.IntegerField(
        default=0,
        help_text="Days the demo moved this course's calendar from its file's dates (0 for a "
        "real course). Reloading the file keeps the shift, so a used demo keeps its term.",
    )
    timezone = models.CharField(
        max_length=64,
        default="America/Los_Angeles",
        validators=[validate_timezone],
        help_text="Every deadline is shown in this zone.",
    )
    location = models.CharField(max_length=200, blank=True, help_text="Where lectures meet.")
    lecture_start = models.CharField(max_length=5, default="09:30", validators=[hhmm])
    lecture_end = models.CharField(max_length=5, default="11:00", validators=[hhmm])

    # --- policy (see domain-rules.md); defaults are the EE 290 values
    due_time = models.CharField(
        max_length=5,
        default="23:59",
        validators=[hhmm],
        help_text="Wall-clock time (course zone) of a deadline given as a date.",
    )
    release_time = models.CharField(
        max_length=5,
        default="00:00",
        validators=[hhmm],
        help_text="Wall-clock time (course zone) of a release given as a date.",
    )
    group_min_size = models.PositiveSmallIntegerField(default=4, validators=[MinValueValidator(1)])
    group_max_size = models.PositiveSmallIntegerField(default=6, validators=[MinValueValidator(1)])
    slack_days_allowance = models.PositiveSmallIntegerField(
        default=3, help_text="Slack days per student per course."
    )
    slack_days_max_per_assignment = models.PositiveSmallIntegerField(default=1)
    slack_grace_minutes = models.PositiveSmallIntegerField(
        default=0, help_text="Minutes after a deadline before a submission counts as late."
    )
    scribe_lectures_per_student = models.PositiveSmallIntegerField(default=2)
    scribe_min_gap_days = models.PositiveSmallIntegerField(
        default=7, help_text="A student's scribe lectures are at least this many days apart."
    )
    scribe_notes_due_days = models.PositiveSmallIntegerField(
        default=7, help_text="Scribe notes are due this many days after the lecture."
    )
    peer_reviews_per_group = models.PositiveSmallIntegerField(default=1)
    checkoff_cutoff_hours = models.PositiveSmallIntegerField(
        default=2,
        help_text="Bookings can be made, moved or cancelled until this many hours before.",
    )
    sharing_window_max_hours = models.PositiveSmallIntegerField(
        default=48, validators=[MinValueValidator(1), MaxValueValidator(24 * 14)]
    )
    reminder_hours = models.JSONField(
        default=list, blank=True, help_text="Hours before each deadline that reminders go out."
    )
    letter_cutoffs = models.JSONField(
        default=list,
        blank=True,
        help_text='Lowest percentage for each letter, highest first: [["A", 93], ["A-", 90], …]. '
        "Empty: the standard scale.",
    )
    study_retention_days = models.PositiveSmallIntegerField(
        default=365,
        validators=[MinValueValidator(30), MaxValueValidator(3650)],
        help_text="Raw quiz imports and the participant-ID map are deleted this many days after "
        "the course's last scheduled day.",
    )
    extension_auto_max_days = models.PositiveSmallIntegerField(
        default=2,
        validators=[MaxValueValidator(14)],
        help_text="Extension requests of at most this many days, made before the deadline, are "
        "approved at once (0: never).",
    )
    extension_auto_per_student = models.PositiveSmallIntegerField(
        default=1, help_text="How many of a student's requests may be approved automatically."
    )
    extension_close_hours = models.PositiveSmallIntegerField(
        default=48, help_text="Extension requests close this many hours after the deadline."
    )
    extension_max_days = models.PositiveSmallIntegerField(
        default=7,
        validators=[MinValueValidator(1), MaxValueValidator(30)],
        help_text="The most days one extension request may ask for.",
    )
    # --- how relief composes on one deadline (course file `policy.relief`; domain-rules.md,
    # "Relief composes under one cap"; the rule is apps.slackdays.rules.relief_stack)
    relief_cap_days = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        default=7,
        validators=[MinValueValidator(1), MaxValueValidator(60)],
        help_text="The most days of relief (slack, extensions, counted accommodations) on one "
        "deadline; empty: no cap.",
    )
    relief_slack_with_extension = models.CharField(
        max_length=8,
        choices=[("stack", "Slack and extensions stack"), ("refund", "An extension refunds slack")],
        default="stack",
        help_text="Whether a slack day and an extension on one deadline both count, or an "
        "approved extension gives the slack day back.",
    )
    relief_accommodations_count = models.BooleanField(
        default=True, help_text="Whether standing accommodation hours count toward the cap."
    )
    relief_over_cap = models.CharField(
        max_length=8,
        choices=[("refuse", "Refused"), ("staff", "Sent to staff")],
        default="staff",
        help_text="What happens to a student's request that would pass the cap.",
    )
    extension_auto_per_group = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        default=1,
        help_text="How many automatic approvals one group may have in all (empty: not counted).",
    )
    extension_auto_per_deadline = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        default=1,
        help_text="How many automatic approvals one student's deadline may carry, their group's "
        "included (empty: not counted).",
    )
    extension_group_closes_own = models.BooleanField(
        default=True,
        help_text="An approved group request closes the members' own open requests on that "
        "deadline.",
    )
    instructors = models.CharField(
        max_length=300, blank=True, help_text="Names shown on the course page, comma-separated."
    )
    links = models.JSONField(
        default=list,
        blank=True,
        help_text='Course links shown on the course page: [{"label": "Ed", "url": "https://…"}].',
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-term", "code")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(group_min_size__lte=models.F("group_max_size")),
                name="course_group_min_le_max",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} — {self.title}"

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)


class Role(models.TextChoices):
    INSTRUCTOR = "instructor", "Instructor"
    TA = "ta", "TA"
    STUDENT = "student", "Student"


STAFF_ROLES = frozenset({Role.INSTRUCTOR, Role.TA})


class Membership(models.Model):
    """A person's one role in one course. Dropped students are made inactive, never deleted."""

    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="memberships")
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    is_active = models.BooleanField(default=True, help_text="Inactive = dropped; history stays.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("course_id", "role", "user__full_name")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "course"], name="membership_one_role_per_course"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=[r.value for r in Role]), name="membership_role_valid"
            ),
        ]
        indexes = [models.Index(fields=["course", "role", "is_active"])]

    def __str__(self) -> str:
        return f"{self.user} — {self.get_role_display()} in {self.course.code}"

    @property
    def is_staff_role(self) -> bool:
        return self.role in STAFF_ROLES


class AuditEvent(models.Model):
    """One thing that happened: who did what to which object, with before/after JSON.

    Written only through `apps.core.services.audit_record`, inside the service's transaction.
    Append-only: `save()` refuses updates and, on PostgreSQL, a trigger refuses UPDATE and
    DELETE of any row (migration 0002).
    """

    actor = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    course = models.ForeignKey(
        Course, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events"
    )
    action = models.CharField(max_length=80, help_text="dotted verb, e.g. group.member_moved")
    object_type = models.CharField(max_length=80, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=200, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [
            models.Index(fields=["course", "-created_at"]),
            models.Index(fields=["object_type", "object_id"]),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_repr}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValidationError("Audit events are append-only.")
        super().save(*args, **kwargs)


class GradingComponent(models.Model):
    """A weighted part of the course grade (e.g. Assignments 35 = core 25 + enhancements 10).

    A component must be satisfactory (`satisfactory_threshold`, percent) or the course grade is
    F, whatever the total.
    """

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="grading_components")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="parts"
    )
    key = models.SlugField(max_length=40, help_text="Stable identifier within the course.")
    name = models.CharField(max_length=100)
    weight = models.DecimalField(
        max_digits=5, decimal_places=2, help_text="Percent of the course grade."
    )
    satisfactory_threshold = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=60,
        help_text="Minimum percent on this component for the course not to be an F.",
    )
    position = models.PositiveSmallIntegerField(default=0)
    source = models.CharField(
        max_length=20,
        default="manual",
        help_text="Where scores come from: manual (entered or imported by staff), autograder, "
        "scribing, checkoffs, peer-review or milestones.",
    )
    blend = models.JSONField(
        default=dict,
        blank=True,
        help_text='A score composed of several sources, by weight: {"manual": 70, '
        '"peer-review": 30} (manual = the score staff enter). Empty: `source` alone.',
    )

    class Meta:
        ordering = ("course_id", "position")
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="grading_component_key_unique"),
            models.CheckConstraint(
                condition=models.Q(weight__gte=0, weight__lte=100), name="grading_weight_0_100"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.weight}%)"


class Heartbeat(models.Model):
    """When a periodic piece last ran ("sweep": beat queued the sweep and a worker ran it), so
    `/readyz` can tell a live worker and beat from silent ones without asking Redis."""

    name = models.CharField(max_length=40, unique=True)
    at = models.DateTimeField()
    detail = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"


class ApiToken(models.Model):
    """One API key of a person, for one client (a script, a laptop, a CI job): named, with when
    it was made and last used, revocable alone. Only its SHA-256 is stored; the key itself is
    shown once, when it is made. `Authorization: Token <key>`."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(
        max_length=100, help_text="Which client uses it, e.g. 'grading laptop'."
    )
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(
        max_length=8, help_text="The key's first characters, to tell keys apart."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("user_id", "-created_at")
        indexes = [models.Index(fields=["user", "revoked_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class OutgoingMail(models.Model):
    """One notification e-mail, kept until the SMTP server has taken it (`apps.core.outbox`).

    `key` is unique per message of one task run, so a task that runs twice (a redelivered
    Celery message, a retried job) records nothing twice and sends nothing twice. A message
    the server refused or broke off is tried again by the job sweep with a growing back-off;
    after `REMINDER_MAX_ATTEMPTS` it is given up (`failed_at`, with `last_error`), visible on
    the Jobs page."""

    key = models.CharField(max_length=64, unique=True)
    course = models.ForeignKey(
        Course, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=60, help_text="The task that wrote it.")
    to = models.JSONField(help_text="Recipient addresses.")
    subject = models.CharField(max_length=300)
    body = models.TextField()
    attachments = models.JSONField(
        default=list, blank=True, help_text="[{name, mimetype, content (base64)}]"
    )
    created_at = models.DateTimeField(default=timezone.now)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    retry_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("created_at", "id")
        indexes = [
            models.Index(
                fields=["retry_at", "claimed_at"],
                condition=models.Q(sent_at__isnull=True, failed_at__isnull=True),
                name="outgoing_mail_waiting",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}"


class DoorCount(models.Model):
    """How many times one key (an address, an identity, a person in one lecture) knocked on one
    door in the current window (`apps.core.doors`). One row per door and key, counted under a
    row lock, so two requests at once never both take the last try; a window that has passed
    starts again at the next knock. Kept in the database, not in Redis: a Redis outage must not
    open the doors (nor turn them into 500s)."""

    door = models.CharField(max_length=40, help_text="The door's name in settings.DOOR_LIMITS.")
    key = models.CharField(max_length=200, help_text="Who knocks: an address, identity or person.")
    window_started = models.DateTimeField(help_text="When the current window began.")
    count = models.PositiveIntegerField(default=0, help_text="Knocks in the current window.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["door", "key"], name="door_count_once")]
        indexes = [models.Index(fields=["window_started"])]

    def __str__(self) -> str:
        return f"{self.door} {self.key}: {self.count}"
