"""The pairing as a picture: groups on a circle, an arrow from each reviewer to the group it
reviews (server-rendered SVG, no script); and per-criterion score distributions."""

from __future__ import annotations

import math
from html import escape


def pairing_svg(names: dict[int, str], pairs: list[tuple[int, int]]) -> str:
    if not names:
        return ""
    w, size, r = 560, 420, 160  # room on both sides for the labels
    cx, cy = w / 2, size / 2
    ids = sorted(names, key=lambda g: names[g])
    pos = {
        g: (
            cx + r * math.cos(2 * math.pi * i / len(ids) - math.pi / 2),
            cy + r * math.sin(2 * math.pi * i / len(ids) - math.pi / 2),
        )
        for i, g in enumerate(ids)
    }
    desc = "; ".join(f"{names[a]} reviews {names[b]}" for a, b in pairs[:200])
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {size}" role="img" '
        'class="pairing" aria-labelledby="pair-t pair-d" font-family="system-ui, sans-serif" '
        'font-size="11">',
        '<title id="pair-t">Who reviews whom</title>',
        f'<desc id="pair-d">{escape(desc)}</desc>',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#2957c4"/></marker></defs>',
    ]
    for a, b in pairs:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        d = math.hypot(x2 - x1, y2 - y1) or 1
        sx, sy = x1 + (x2 - x1) * 9 / d, y1 + (y2 - y1) * 9 / d
        ex, ey = x2 - (x2 - x1) * 11 / d, y2 - (y2 - y1) * 11 / d
        out.append(
            f'<line class="edge" x1="{sx:.1f}" y1="{sy:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" '
            'stroke="#2957c4" stroke-width="1.4" '
            f'marker-end="url(#arrow)"><title>{escape(names[a])} → '
            f"{escape(names[b])}</title></line>"
        )
    for g, (x, y) in pos.items():
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="7" fill="#fff" stroke="#1d2330"/>')
        if len(ids) <= 40:
            anchor = "start" if x >= cx else "end"
            out.append(
                f'<text x="{x + (10 if anchor == "start" else -10):.1f}" y="{y + 4:.1f}" '
                f'text-anchor="{anchor}">{escape(names[g][:18])}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


def _describe(rows: list[tuple[str, list[int]]]) -> str:
    """The chart in words, for screen readers: "clarity: 1: 0, 2: 1, …; depth: …"."""
    return "; ".join(
        f"{key}: " + ", ".join(f"{score}: {n}" for score, n in enumerate(counts, 1))
        for key, counts in rows
    )


def distributions_svg(rows: list[tuple[str, list[int]]]) -> str:
    """One row per criterion: how many submitted reviews gave 1, 2, 3, 4, 5."""
    if not rows:
        return ""
    w, row_h, left = 640, 30, 170
    top = max(max(c) for _, c in rows) or 1
    cell = (w - left - 10) / 5
    h = 20 + row_h * len(rows)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="stacked" '
        f'aria-labelledby="dist-t dist-d" font-family="system-ui, sans-serif" font-size="11">',
        '<title id="dist-t">Scores by criterion</title>',
        f'<desc id="dist-d">{escape(_describe(rows))}</desc>',
    ]
    out.extend(
        f'<text x="{left + cell * i + cell / 2:.1f}" y="12" text-anchor="middle">{i + 1}</text>'
        for i in range(5)
    )
    for j, (label, counts) in enumerate(rows):
        y = 20 + j * row_h
        out.append(f'<text x="0" y="{y + 17}">{escape(label)}</text>')
        for i, n in enumerate(counts):
            bw = (cell - 6) * n / top
            out.append(
                f'<rect x="{left + cell * i + 3:.1f}" y="{y + 4}" width="{bw:.1f}" height="18" '
                f'fill="#2957c4"><title>{escape(label)}: {n} gave {i + 1}</title></rect>'
            )
            out.append(f'<text x="{left + cell * i + 6 + bw:.1f}" y="{y + 17}">{n}</text>')
    out.append("</svg>")
    return "\n".join(out)
