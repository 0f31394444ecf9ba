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
