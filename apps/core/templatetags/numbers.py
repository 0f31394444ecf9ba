from __future__ import annotations

from typing import Any

from django import template

from apps.core.numbers import sig

register = template.Library()


@register.filter
def num(value: Any, digits: int = 4) -> str:
    """{{ key|num }} → '0.6', '195', '1,979': see apps.core.numbers.sig."""
    return sig(value, int(digits))
