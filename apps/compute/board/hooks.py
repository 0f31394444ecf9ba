"""Where the floors above the board add to it without the board importing them.

The board is compute's lowest floor: `cloud` and `usage` import it, never the reverse. What they
add to a board page is registered here from `ComputeConfig.ready()` (as panels and Today sources
are registered with `apps.core.registry`), and what they do when a group changes is a subscriber
of `apps.core.lifecycle`, registered after the board's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apps.compute.models import Node
from apps.core.models import Course

NodePageContext = Callable[[Course, int | None, Node | None], dict[str, Any]]

_node_page: list[NodePageContext] = []


def register_node_page(context: NodePageContext) -> None:
    """Add to the student's node page: `context(course, group_id, node)` returns template
    variables (a fixed number of queries)."""
    if context not in _node_page:
        _node_page.append(context)


def node_page_context(course: Course, group_id: int | None, node: Node | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for context in _node_page:
        out.update(context(course, group_id, node))
    return out
