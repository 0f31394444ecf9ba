"""API date fields that refuse what no course holds. 9999-12-31 is a valid date, but a deadline
there overflows the moment a slack day is added to it or it is shown in the course's zone: one
such PATCH made every student's Today, slack page and calendar answer 500. Every date and time an
API request carries is read through these (they render like DRF's own)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.core.timefmt import COURSE_YEARS, OUT_OF_RANGE


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
