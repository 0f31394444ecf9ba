"""The version of a course's GPU-hour quota inputs (`apps.core.versions`): on the ground floor
so that every floor that writes those rows in bulk can drop it (`usage.quota_cache` drops it on
each saved or deleted row)."""

from __future__ import annotations

from apps.core.versions import version_drop


def quota_version(course_id: int) -> str:
    return f"quota:{course_id}"


def quota_changed(course_id: int) -> None:
    """A row a quota standing of the course is computed from was written."""
    version_drop(quota_version(course_id))
