"""The preview of an upload lists at most PREVIEW_ROWS rows of each kind (problems, rows added,
outcomes), then says how many more there are: the wrong file picked by mistake (20,000 rows that
are all problems) made a 5 MB page, and the first 200 of a kind already show what to fix. The
counts above each list still count every row.

    {% for p in plan.problems|first_rows %}…{% endfor %}{% more_rows plan.problems "problems" %}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import template

register = template.Library()
PREVIEW_ROWS = 200


@register.filter
def first_rows(rows: Sequence[Any]) -> Sequence[Any]:
    return rows[:PREVIEW_ROWS]


@register.inclusion_tag("core/_more_rows.html")
def more_rows(rows: Sequence[Any], what: str, total: int | None = None) -> dict[str, Any]:
    """`total`: how many there are, where `rows` keeps only the first of them."""
    more = (len(rows) if total is None else total) - PREVIEW_ROWS
    return {"more": f"{more:,}" if more > 0 else "", "what": what, "shown": PREVIEW_ROWS}
