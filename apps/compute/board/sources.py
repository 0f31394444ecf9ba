"""Sharing windows on calendars: the approved windows a student's group takes part in (as the
requester or as an owner lending its node). Staff calendars leave them out: the compute board's
timeline is where staff look at every window."""

from __future__ import annotations

from collections.abc import Iterable

from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.compute.board.selectors import window_list
from apps.compute.models import SharingWindow


def window_events(query: EventQuery) -> Iterable[Event]:
    if query.staff or query.deadlines_only:
        return
    windows = window_list(user=query.user, course=query.course).filter(
        status=SharingWindow.Status.APPROVED
    )
    if query.start is not None:
        windows = windows.filter(ends_at__gte=query.start)
    if query.end is not None:
        windows = windows.filter(starts_at__lt=query.end)
    code = query.course.code
    for w in windows:
        nodes = ", ".join(wn.node.name for wn in w.nodes.all())
        yield Event(
            uid=uid("window", w.pk, code),
            kind="window",
            title=f"Multi-node window: {w.requester.name} on {nodes}",
            start=w.starts_at,
            end=w.ends_at,
            description=w.purpose,
            location=nodes,
            path=f"/c/{code}/node/",
        )
