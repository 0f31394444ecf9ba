"""Server-rendered SVG for sign-ups (no script, no CDN): a grid with one column per day (the week
view) or per room or staff member (a day's schedule), time running down, each slot a box coloured
by what it means to the reader: free places, full, yours, or its outcome."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

COLOURS = {
    "free": ("#dff5e5", "#1d7a3a"),  # fill, stroke
    "full": ("#eceff3", "#8a94a6"),
    "mine": ("#dbe6ff", "#2957c4"),
    "closed": ("#f6f6f6", "#c3c8d2"),
    "passed": ("#c8efd4", "#1d7a3a"),
    "redo": ("#ffe7c2", "#b86e00"),
    "no-show": ("#ffd9d4", "#b3261e"),
    "booked": ("#dbe6ff", "#2957c4"),
}
LEGEND = {
    "free": "places free",
    "full": "full",
    "mine": "your group",
    "closed": "closed (cut-off)",
    "booked": "booked",
    "passed": "passed",
    "redo": "redo",
    "no-show": "no-show",
}


@dataclass(frozen=True)
class Box:
    column: int
    start: int  # minutes after midnight, course time
    end: int
    text: str  # one short line inside the box
    state: str  # a key of COLOURS
    title: str  # the tooltip: the whole story
    href: str = ""


def grid_svg(columns: list[str], boxes: list[Box], *, title: str, legend: list[str]) -> str:
    if not columns:
        return ""
    first = min((b.start for b in boxes), default=9 * 60) // 60 * 60
    last = -(-max((b.end for b in boxes), default=17 * 60) // 60) * 60
    last = max(last, first + 60)
    # Every box gets at least 26 px, however short the slots; a lone column is wider.
    shortest = min((b.end - b.start for b in boxes if b.end > b.start), default=60)
    left, top = 44, 34
    col_w = 220 if len(columns) <= 2 else 150
    per_hour = min(max(64, 26 * 60 // max(shortest, 1)), 320)
    width = left + col_w * len(columns) + 6
    height = top + (last - first) * per_hour // 60 + 8

    def y(minute: int) -> float:
        return top + (minute - first) * per_hour / 60

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="group" class="slotgrid" '
        f'aria-labelledby="grid-t grid-d" font-family="system-ui, sans-serif" font-size="12">',
        f'<title id="grid-t">{escape(title)}</title>',
        f'<desc id="grid-d">{escape("; ".join(b.title for b in boxes)[:2000])}</desc>',
    ]
    for hour in range(first // 60, last // 60 + 1):
        yy = y(hour * 60)
        out.append(
            f'<line x1="{left - 4}" x2="{width - 4}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#e3e6ec"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end" '
            f'fill="#5b6475">{hour % 12 or 12}'
            f"{'a' if hour < 12 else 'p'}</text>"
        )
    for i, name in enumerate(columns):
        x = left + i * col_w
        out.append(
            f'<text x="{x + col_w / 2:.1f}" y="20" text-anchor="middle" '
            f'font-weight="600">{escape(name[:22])}</text>'
        )
        out.append(f'<line x1="{x}" x2="{x}" y1="{top - 6}" y2="{height - 4}" stroke="#e3e6ec"/>')
    for b in boxes:
        fill, stroke = COLOURS.get(b.state, COLOURS["free"])
        x, y0, y1 = left + b.column * col_w + 3, y(b.start), y(b.end)
        h = max(y1 - y0 - 2, 10)
        rect = (
            f'<rect x="{x}" y="{y0 + 1:.1f}" width="{col_w - 6}" height="{h:.1f}" rx="4" '
            f'fill="{fill}" stroke="{stroke}" '
            f'class="slot-{escape(b.state)}"><title>{escape(b.title)}</title></rect>'
        )
        text = (
            f'<text x="{x + 5}" y="{y0 + min(h, 22) / 2 + 5:.1f}" '
            f'fill="#1c2333">{escape(b.text[:24])}</text>'
            if h >= 14
            else ""
        )
        # A shortcut for the mouse: the same slot is a link in the list by day (or the table) on
        # the page, so here it is neither a second Tab stop nor read twice.
        link = f'<a href="{escape(b.href)}" tabindex="-1" aria-hidden="true">{rect}{text}</a>'
        out.append(link if b.href else rect + text)
    out.append("</svg>")
    keys = "".join(
        '<span class="key"><svg class="swatch" viewBox="0 0 12 12" aria-hidden="true"><rect '
        f'width="12" height="12" rx="2" fill="{COLOURS[k][0]}" stroke="{COLOURS[k][1]}"/></svg> '
        f"{escape(LEGEND[k])}</span> "
        for k in legend
    )
    caption = f'<figcaption class="legend small">{keys}</figcaption>'
    return f'<figure class="slotgrid-wrap">{"".join(out)}{caption}</figure>'
