"""A server-rendered SVG timeline of sharing windows per node over the coming weeks."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterable
from html import escape

from apps.compute.models import Node, SharingWindow

W, ROW, LEFT, TOP = 900, 26, 130, 34


def timeline_svg(
    nodes: list[Node], windows: Iterable[SharingWindow], *, start: dt.datetime, days: int, tz: str
) -> str:
    zone = zoneinfo.ZoneInfo(tz)
    day0 = start.astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    span = dt.timedelta(days=days).total_seconds()
    height = TOP + ROW * max(len(nodes), 1) + 24
    scale = (W - LEFT - 10) / span

    def x(t: dt.datetime) -> float:
        return LEFT + max(0.0, min(span, (t - day0).total_seconds())) * scale

    row = {n.pk: i for i, n in enumerate(nodes)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" role="img" '
        'class="timeline" aria-labelledby="tl-title" font-family="system-ui, sans-serif" '
        'font-size="11">',
        f'<title id="tl-title">Sharing windows per node, {day0:%b %d} to '
        f"{(day0 + dt.timedelta(days=days)):%b %d} ({tz})</title>",
    ]
    for d in range(days + 1):
        t = day0 + dt.timedelta(days=d)
        parts.append(
            f'<line x1="{x(t):.1f}" y1="{TOP - 6}" x2="{x(t):.1f}" y2="{height - 20}" '
            f'stroke="{"#c9d1e3" if t.weekday() == 0 else "#eef"}"/>'
        )
        if d < days and (days <= 14 or d % 2 == 0):
            parts.append(f'<text x="{x(t) + 2:.1f}" y="{TOP - 10}">{t:%a %d}</text>')
    for n in nodes:
        y = TOP + ROW * row[n.pk]
        parts.append(f'<text x="6" y="{y + 16}">{escape(n.name)}</text>')
        parts.append(
            f'<line x1="{LEFT}" y1="{y + ROW}" x2="{W - 10}" y2="{y + ROW}" stroke="#eef"/>'
        )
    now_x = x(start)
    parts.append(
        f'<line x1="{now_x:.1f}" y1="{TOP - 6}" x2="{now_x:.1f}" y2="{height - 20}" '
        f'stroke="#c0392b" stroke-dasharray="3 2"/>'
    )
    end = day0 + dt.timedelta(days=days)
    for w in windows:
        if w.ends_at <= day0 or w.starts_at >= end:
            continue
        approved = w.status == SharingWindow.Status.APPROVED
        for wn in w.nodes.all():
            if wn.node_id not in row:
                continue
            y = TOP + ROW * row[wn.node_id] + 4
            x0, x1 = x(w.starts_at), x(w.ends_at)
            fill = "#2957c4" if approved else "#9fb4e6"
            dash = "" if approved else ' stroke="#2957c4" stroke-dasharray="3 2"'
            label = f"#{w.pk} {w.requester.name} ({w.get_status_display().lower()})"
            parts.append(
                f'<rect class="window {w.status}" x="{x0:.1f}" y="{y}" '
                f'width="{max(2.0, x1 - x0):.1f}" height="{ROW - 8}" '
                f'rx="3" fill="{fill}"{dash}>'
                f"<title>{escape(label)}: {w.starts_at.astimezone(zone):%a %b %d %H:%M} – "
                f"{w.ends_at.astimezone(zone):%a %b %d %H:%M %Z}</title></rect>"
            )
            if x1 - x0 > 60:
                parts.append(
                    f'<text x="{x0 + 4:.1f}" y="{y + 13}" '
                    f'fill="{"#fff" if approved else "#183069"}">#{w.pk} '
                    f"{escape(w.requester.name)}</text>"
                )
    parts.append(
        f'<text x="{LEFT}" y="{height - 6}" fill="#5b6475">solid = approved, dashed = awaiting '
        f"approval, red line = now</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)
