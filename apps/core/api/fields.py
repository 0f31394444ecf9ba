"""API date fields that refuse what no course holds. 9999-12-31 is a valid date, but a deadline
there overflows the moment a slack day is added to it or it is shown in the course's zone: one
such PATCH made every student's Today, slack page and calendar answer 500. Every date and time an
API request carries is read through these (they render like DRF's own)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.timefmt import COURSE_YEARS, OUT_OF_RANGE, format_instant, to_course_tz


def _in_course_years(parsed: Any) -> Any:
    if parsed.year not in COURSE_YEARS:
        raise serializers.ValidationError(OUT_OF_RANGE)
    return parsed


class CourseDateTimeField(serializers.DateTimeField):
    def to_internal_value(self, value: Any) -> dt.datetime:
        return _in_course_years(super().to_internal_value(value))


class CourseDateField(serializers.DateField):
    def to_internal_value(self, value: Any) -> dt.date:
        return _in_course_years(super().to_internal_value(value))


def _course_zone(field: serializers.Field) -> str:
    """The zone a read field writes times in: the serializer's context names the course (or
    its zone), as every course-scoped view passes it."""
    ctx = field.context
    if "timezone" in ctx:
        return str(ctx["timezone"])
    return str(ctx["course"].timezone)


@extend_schema_field(OpenApiTypes.DATETIME)
class CourseTimeField(serializers.Field):
    """An instant as ISO 8601 in the course's zone, with its offset (read-only): what a page
    shows, in a form a program reads."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: dt.datetime) -> str:
        return to_course_tz(value, _course_zone(self)).isoformat()


@extend_schema_field(OpenApiTypes.STR)
class CourseTimeTextField(CourseTimeField):
    """An instant as the page writes it: 'Tue Feb 10, 2026, 11:59 PM PST' (read-only)."""

    def to_representation(self, value: dt.datetime) -> str:
        return format_instant(value, _course_zone(self))


@extend_schema_field(OpenApiTypes.STR)
class CourseZoneField(serializers.Field):
    """The course's zone, which every time of the answer is given in (read-only)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.update(read_only=True, source="*")
        kwargs.setdefault("help_text", "The course's zone, which every `*_text` is written in.")
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        return _course_zone(self)
