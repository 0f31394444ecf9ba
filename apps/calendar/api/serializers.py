"""The course as an API client sees it: policy, calendar and grading in one document. Lives in
the calendar app (above core), so core imports no app."""

from __future__ import annotations

from rest_framework import serializers

from apps.calendar.models import Assignment, Lecture, Milestone, RecessDay
from apps.core.api.serializers import (
    CourseListSerializer,
    GradingComponentSerializer,
    PolicySerializer,
)


class LectureSerializer(serializers.ModelSerializer):
    class Meta:
        model = Lecture
        fields = ("id", "number", "title", "starts_at", "ends_at", "is_guest", "part", "notes")


class RecessDaySerializer(serializers.ModelSerializer):
    class Meta:
        model = RecessDay
        fields = ("id", "date", "note")


class AssignmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Assignment
        fields = ("id", "code", "title", "release_at", "due_at", "accepts_slack")


class MilestoneSerializer(serializers.ModelSerializer):
    class Meta:
        model = Milestone
        fields = ("id", "key", "name", "due_at", "notes")


class CourseDetailSerializer(CourseListSerializer):
    """A course with its calendar. Instants are UTC (ISO 8601); show them in `timezone`."""

    location = serializers.CharField()
    lecture_start = serializers.CharField()
    lecture_end = serializers.CharField()
    policy = PolicySerializer(source="*", read_only=True)
    lectures = LectureSerializer(many=True, read_only=True)
    recess_days = RecessDaySerializer(many=True, read_only=True)
    assignments = AssignmentSerializer(many=True, read_only=True)
    milestones = MilestoneSerializer(many=True, read_only=True)
    grading_components = GradingComponentSerializer(many=True, read_only=True)

    class Meta(CourseListSerializer.Meta):
        fields: tuple[str, ...] = (  # type: ignore[assignment]
            *CourseListSerializer.Meta.fields,
            "location",
            "lecture_start",
            "lecture_end",
            "policy",
            "lectures",
            "recess_days",
            "assignments",
            "milestones",
            "grading_components",
        )
