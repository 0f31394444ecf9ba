"""The report's three pictures as server-rendered SVG (no script, no CDN): pre and post score
histograms overlaid, per-goal gains with 95 % confidence intervals, misconception prevalence
before and after."""

from __future__ import annotations

from html import escape
from typing import Any

PRE, POST = "#8a94a6", "#2957c4"
W = 640


def _open(title: str, h: int, key: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" class="plot '
        f'{key}" aria-labelledby="{key}-t" font-family="system-ui, sans-serif" font-size="11">',
        f'<title id="{key}-t">{escape(title)}</title>',
    ]


def _legend(y: int) -> str:
    return (
        f'<rect x="{W - 150}" y="{y}" width="10" height="10" fill="{PRE}" opacity="0.6"/><text '
        f'x="{W - 136}" y="{y + 9}">pre</text><rect x="{W - 100}" y="{y}" width="10" height="10" '
        f'fill="{POST}" opacity="0.6"/><text x="{W - 86}" y="{y + 9}">post</text>'
    )


def histograms_svg(pre: list[int], post: list[int], max_points: float) -> str:
    """Share of participants at each total, pre and post overlaid (shares, so phases of
    different sizes compare)."""
    h, left, bottom, top = 220, 40, 30, 24
    k = max(len(pre), len(post))
    if not k:
        return ""
    sp = [x / max(sum(pre), 1) for x in pre] + [0.0] * (k - len(pre))
    sq = [x / max(sum(post), 1) for x in post] + [0.0] * (k - len(post))
    peak = max(max(sp), max(sq), 0.01)
    step = (W - left - 10) / k
    out = _open("Scores before and after", h, "hist")
    for i in range(k):
        x = left + i * step
        for share, colour in ((sp[i], PRE), (sq[i], POST)):
            bh = (h - top - bottom) * share / peak
            out.append(
                f'<rect x="{x + 2:.1f}" y="{h - bottom - bh:.1f}" width="{step - 4:.1f}" '
                f'height="{bh:.1f}" fill="{colour}" opacity="0.6"><title>{i} points: '
                f"{100 * share:.0f} %</title></rect>"
            )
        out.append(
            f'<text x="{x + step / 2:.1f}" y="{h - bottom + 14}" text-anchor="middle">{i}</text>'
        )
    out.append(
        f'<text x="{left}" y="14">Share of participants by total (of '
        f"{max_points:g})</text>{_legend(4)}</svg>"
    )
    return "\n".join(out)


def goal_gains_svg(goals: list[dict[str, Any]]) -> str:
    """Mean gain per goal as a share of that goal's own maximum, with its 95 % interval."""
    if not goals:
        return ""
    h, left, top, bottom = 240, 44, 24, 40
    lo = min(
        -0.2,
        *[(g["gain_share"]["low"] if g["gain_share"]["low"] is not None else 0) for g in goals],
    )
    hi = max(
        1.0,
        *[(g["gain_share"]["high"] if g["gain_share"]["high"] is not None else 0) for g in goals],
    )
    step = (W - left - 10) / len(goals)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (h - top - bottom)

    out = _open("Gain per understanding goal, with 95 % confidence intervals", h, "goals")
    out.append(f'<line x1="{left}" x2="{W - 6}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#5b6475"/>')
    for v in (0.5, 1.0):
        out.append(
            f'<line x1="{left}" x2="{W - 6}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e3e6ec"/>'
            f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:+.0%}</text>'
        )
    for i, g in enumerate(goals):
        m = g["gain_share"]["mean"]
        x = left + i * step
        top_y, base = (y(m), y(0)) if m >= 0 else (y(0), y(m))
        out.append(
            f'<rect x="{x + step * 0.2:.1f}" y="{top_y:.1f}" width="{step * 0.6:.1f}" '
            f'height="{abs(base - top_y):.1f}" '
            f'fill="{POST}" opacity="0.75"><title>{escape(g["goal"])}: {m:+.1%} of '
            f"{g['max_points']:g} points</title></rect>"
        )
        if g["gain_share"]["low"] is not None:
            cx = x + step / 2
            out.append(
                f'<line class="ci" x1="{cx:.1f}" x2="{cx:.1f}" '
                f'y1="{y(g["gain_share"]["low"]):.1f}" '
                f'y2="{y(g["gain_share"]["high"]):.1f}" stroke="#1c2333" stroke-width="1.5"/>'
            )
        out.append(
            f'<text x="{x + step / 2:.1f}" y="{h - bottom + 14}" '
            f'text-anchor="middle">{escape(g["goal"])}</text>'
            f'<text x="{x + step / 2:.1f}" y="{h - bottom + 27}" text-anchor="middle" '
            f'fill="#5b6475">max {g["max_points"]:g}</text>'
        )
    out.append(f'<text x="{left}" y="14">Mean gain as a share of each goal\'s maximum</text></svg>')
    return "\n".join(out)


def misconceptions_svg(rows: list[dict[str, Any]]) -> str:
    """Share of participants showing each misconception, before and after."""
    rows = [r for r in rows if r["pre"] is not None or r["post"] is not None]
    if not rows:
        return ""
    left, row_h, top = 230, 30, 24
    h = top + row_h * len(rows) + 10
    width = W - left - 40
    out = _open("Misconceptions before and after", h, "misc")
    for i, r in enumerate(rows):
        y0 = top + i * row_h
        out.append(
            f'<text x="{left - 6}" y="{y0 + 16}" text-anchor="end">{escape(r["name"][:38])}</text>'
        )
        for j, (key, colour) in enumerate((("pre", PRE), ("post", POST))):
            v = r[key] or 0.0
            out.append(
                f'<rect x="{left}" y="{y0 + 3 + j * 12}" width="{width * v:.1f}" height="10" '
                f'fill="{colour}" opacity="0.8">'
                f"<title>{escape(r['name'])}, {key}: {100 * v:.0f} %</title></rect>"
                f'<text x="{left + width * v + 4:.1f}" y="{y0 + 12 + j * 12}" '
                f'fill="#5b6475">{100 * v:.0f} %</text>'
            )
    out.append(f'<text x="{left}" y="14">Share of participants</text>{_legend(4)}</svg>')
    return "\n".join(out)
