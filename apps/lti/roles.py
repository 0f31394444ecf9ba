"""LTI roles → courseops roles (pure)."""

from __future__ import annotations

from collections.abc import Iterable

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership"


def course_role(roles: Iterable[str]) -> str | None:
    """Instructor → instructor, TeachingAssistant → ta, Learner → student (the strongest wins);
    None for a role courseops has no place for (e.g. Mentor only)."""
    found = set(roles)
    if f"{LIS}#Instructor" in found or f"{LIS}#Administrator" in found:
        return "instructor"
    if f"{LIS}/Instructor#TeachingAssistant" in found or f"{LIS}#TeachingAssistant" in found:
        return "ta"
    if f"{LIS}#Learner" in found:
        return "student"
    return None
