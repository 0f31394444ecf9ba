"""The slack-day ledger and exceptions.

`SlackAccount` is the row every ledger write locks. `LedgerEntry` rows are append-only, numbered
per account (`seq`, unique), and carry the balance after them, which the database keeps within
[0, allowance]. `ActiveSpend` is the current state "this student has slack on this assignment":
unique per (account, assignment, slot), so two concurrent spends cannot both take a slot.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from apps.calendar.models import Assignment
from apps.core.models import Course


class SlackAccount(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="slack_accounts")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="slack_accounts"
    )
    allowance = models.PositiveSmallIntegerField(
        help_text="Copied from the course policy when opened."
    )
    balance = models.SmallIntegerField(
        help_text="Equals the last entry's balance_after; kept for locking and reads."
    )
    last_seq = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "student"], name="one_slack_account"),
            models.CheckConstraint(
                condition=models.Q(balance__gte=0) & models.Q(balance__lte=models.F("allowance")),
                name="slack_balance_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.student}: {self.balance}/{self.allowance}"


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        SPEND = "spend", "Spent"
        CANCEL = "cancel", "Cancelled"
        REFUND = "refund", "Refunded"
        ADJUSTMENT = "adjustment", "Adjusted"

    account = models.ForeignKey(SlackAccount, on_delete=models.PROTECT, related_name="entries")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    delta = models.SmallIntegerField(
        help_text="-1 for a spend, +1 for a cancel or refund, ± for adjustments."
    )
    balance_after = models.SmallIntegerField()
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    group = models.ForeignKey(
        "groups.Group",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The group the day was spent for.",
    )
    batch = models.UUIDField(
        default=uuid.uuid4, help_text="Entries written together (one group spend)."
    )
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("account_id", "seq")
        constraints = [
            models.UniqueConstraint(fields=["account", "seq"], name="ledger_seq_unique"),
            models.CheckConstraint(
                condition=models.Q(balance_after__gte=0), name="ledger_balance_not_negative"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(kind="spend", delta=-1)
                    | models.Q(kind__in=["cancel", "refund"], delta=1)
                    | models.Q(kind="adjustment")
                ),
                name="ledger_delta_matches_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account.student} {self.kind} {self.delta:+d} → {self.balance_after}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ValidationError("Ledger entries are append-only.")
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class ActiveSpend(models.Model):
    account = models.ForeignKey(
        SlackAccount, on_delete=models.CASCADE, related_name="active_spends"
    )
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    slot = models.PositiveSmallIntegerField(help_text="1 … the course's per-assignment maximum.")
    entry = models.OneToOneField(LedgerEntry, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "assignment", "slot"], name="one_spend_per_slot"
            ),
            models.CheckConstraint(condition=models.Q(slot__gte=1), name="slot_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.account.student} slack on {self.assignment}"


class DeadlineException(models.Model):
    """Extra hours granted by staff, relative to the base deadline (so moving the base moves
        them). A one-off extension is for one assignment and a student or a group; an accommodation
        is for a student on every assignment. Exceptions never consume slack. Every grant is judged
    by the relief rule (`apps.slackdays.relief`): past the course's cap only with staff's explicit
    confirmation, recorded here as `cap_days_confirmed` and in an audit row."""

    class Kind(models.TextChoices):
        EXTENSION = "extension", "One-off extension"
        ACCOMMODATION = "accommodation", "Accommodation (every assignment)"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="deadline_exceptions")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="exceptions"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    group = models.ForeignKey(
        "groups.Group", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    hours = models.PositiveSmallIntegerField(help_text="Extra hours after the base deadline.")
    reason = models.CharField(max_length=300)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    cap_days_confirmed = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Set when staff granted past the course's relief cap: the total days of relief "
        "they confirmed on this deadline (an accommodation: on every deadline). Audited.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)
        constraints = [
            models.CheckConstraint(
                condition=models.Q(hours__gte=1), name="exception_hours_positive"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(
                        kind="accommodation",
                        assignment__isnull=True,
                        student__isnull=False,
                        group__isnull=True,
                    )
                    | models.Q(kind="extension", assignment__isnull=False)
                    & (
                        models.Q(student__isnull=False, group__isnull=True)
                        | models.Q(student__isnull=True, group__isnull=False)
                    )
                ),
                name="exception_shape",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} +{self.hours} h"


class LateWork(models.Model):
    """A late submission slack could not cover, found by a lateness import, for staff to decide."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        EXCEPTION = "exception", "Exception granted"
        LEFT = "left", "Left as late"

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="late_work")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="late_work")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    submitted_at = models.DateTimeField()
    late_by = models.DurationField(help_text="After the effective deadline without slack.")
    why = models.CharField(max_length=300)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("assignment_id", "student_id")
        constraints = [
            models.UniqueConstraint(fields=["assignment", "student"], name="late_work_once")
        ]

    def __str__(self) -> str:
        return f"{self.student} late on {self.assignment}"


class LatenessImport(models.Model):
    """A Gradescope assignment export, kept from preview to commit."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lateness_imports")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    filename = models.CharField(max_length=200)
    content = models.BinaryField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.assignment.code}: {self.filename}"
