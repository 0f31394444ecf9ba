"""Serializers of a person's calendar and feed settings (the course-detail serializers stay in
serializers.py)."""

from __future__ import annotations

from rest_framework import serializers

from apps.calendar.registry import REMINDER_KINDS
from apps.core.api.fields import CourseDateField, CourseDateTimeField


class EventSerializer(serializers.Serializer):
    uid = serializers.CharField(help_text="Stable across edits; the feed's UID.")
    kind = serializers.CharField(
        help_text="lecture, recess, release, session, office-hours, assignment, milestone, window …"
    )
    code = serializers.CharField(allow_blank=True)
    title = serializers.CharField()
    start = serializers.DateTimeField(help_text="For a deadline: when it is due (UTC).")
    end = serializers.DateTimeField(allow_null=True, help_text="null for a deadline.")
    is_deadline = serializers.BooleanField()
    all_day = serializers.BooleanField()
    description = serializers.CharField(allow_blank=True)
    location = serializers.CharField(allow_blank=True)
    path = serializers.CharField(allow_blank=True, help_text="The page about it.")
    sequence = serializers.IntegerField(help_text="Grows with every change (iCal SEQUENCE).")
    status = serializers.CharField(
        allow_blank=True, help_text="A milestone's status for your group."
    )
    timezone = serializers.CharField(help_text="The course's zone, which `start_text` is in.")
    start_text = serializers.CharField(
        help_text="`start` in course time as the calendar's list writes it (a day if all-day)."
    )


class FeedSerializer(serializers.Serializer):
    url = serializers.URLField(allow_null=True, help_text="The secret feed URL; null when off.")
    created_at = serializers.DateTimeField(allow_null=True)
    reminders_off = serializers.ListField(
        child=serializers.ChoiceField(choices=list(REMINDER_KINDS))
    )
    reminder_hours = serializers.ListField(child=serializers.IntegerField())


class ReminderChoiceSerializer(serializers.Serializer):
    reminders_off = serializers.ListField(
        child=serializers.ChoiceField(choices=list(REMINDER_KINDS)),
        allow_empty=True,
        help_text="Kinds of reminder you do not want (assignment, milestone, duty).",
    )


class LectureEditSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, max_length=200)
    date = CourseDateField(
        required=False, help_text="Course-local date; the lecture keeps its time of day."
    )
    is_guest = serializers.BooleanField(required=False)


class DeadlineEditSerializer(serializers.Serializer):
    """Shared by assignments and milestones: moving `due_at` needs `confirm: true` (read the
    impact first: `GET …/impact/?due_at=`)."""

    due_at = CourseDateTimeField(required=False, help_text="New deadline (ISO 8601 with offset).")
    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Required to move a deadline: everyone affected is e-mailed.",
    )


class ImpactQuerySerializer(serializers.Serializer):
    due_at = CourseDateTimeField(
        help_text="The deadline you are thinking of (ISO 8601 with offset)."
    )


class PersonMoveSerializer(serializers.Serializer):
    email = serializers.EmailField()
    old = serializers.DateTimeField()
    new = serializers.DateTimeField()
    note = serializers.CharField(allow_blank=True)


class ImpactSerializer(serializers.Serializer):
    what = serializers.CharField()
    old_due = serializers.DateTimeField()
    new_due = serializers.DateTimeField()
    people = serializers.IntegerField(help_text="How many students' deadlines move.")
    groups = serializers.IntegerField()
    special = PersonMoveSerializer(
        many=True, help_text="People whose deadline is not the plain base."
    )
    moot_slack = serializers.ListField(
        child=serializers.EmailField(), help_text="Slack days the move makes moot."
    )
