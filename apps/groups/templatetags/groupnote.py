"""`{% no_group course "why" %}`: what a student without a group reads on a page that works per
group. While formation is open it sends them to My group to join or start one; once groups are
final it says that the staff place them, so no page offers a join that My group then refuses."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from apps.core.models import Course
from apps.groups import rules, services

register = template.Library()


@register.inclusion_tag("groups/_no_group.html")
def no_group(course: Course, why: str, css: str = "card") -> dict[str, Any]:
    deadline = services.formation_deadline(course)
    return {
        "course": course,
        "why": why,
        "css": css,
        "deadline": deadline,
        "is_open": rules.formation_open(now=timezone.now(), deadline=deadline),
    }
