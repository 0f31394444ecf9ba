"""Small helpers for the page frame (base.html)."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.contrib.messages import constants

register = template.Library()


@register.filter
def has_error(messages: Iterable[object]) -> bool:
    """Whether any of the request's messages is an error: the list is then the page's error
    summary (role=alert, focused on load)."""
    return any(getattr(m, "level", 0) >= constants.ERROR for m in messages)


@register.filter
def field_anchor(message: object) -> str:
    """The id of the input an error message is about ("field-<id>" among its tags), so the
    error summary links to it; "" for a message about no one field."""
    for tag in str(getattr(message, "extra_tags", "") or "").split():
        if tag.startswith("field-"):
            return tag.removeprefix("field-")
    return ""
