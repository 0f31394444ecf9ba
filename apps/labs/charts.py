"""Server-rendered SVG for labs (no script, no CDN): a step's profile before and after, and the
class's locked predictions against the true value."""

from __future__ import annotations

from collections import Counter
from html import escape

W = 640
PALETTE = ["#2957c4", "#d97706", "#16a34a", "#9333ea", "#b3261e", "#0891b2"]


def profile_svg(before: dict[str, float], after: dict[str, float], labels: dict[str, str]) -> str:
    """Two stacked bars (before, after: shares of the step) with a legend."""
    keys = list(before)
    left, bar_h, h = 60, 26, 120 + 18 * ((len(keys) + 1) // 2)
    span = W - left - 10
    described = "; ".join(
        f"{labels.get(k, k)} {before[k] * 100:.1f}% → {after.get(k, 0) * 100:.1f}%" for k in keys
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" '
        'aria-labelledby="profile-t profile-d" font-family="system-ui, sans-serif" font-size="12">',
        '<title id="profile-t">The step\'s profile before and after</title>',
        f'<desc id="profile-d">{escape(described)}</desc>',
    ]
    for row, (name, shares) in enumerate((("Before", before), ("After", after))):
        y = 10 + row * (bar_h + 12)
        out.append(f'<text x="0" y="{y + 17}">{name}</text>')
        x = float(left)
        for i, k in enumerate(keys):
            w = span * shares.get(k, 0)
            out.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                f'fill="{PALETTE[i % len(PALETTE)]}"><title>{escape(labels.get(k, k))}: '
                f"{shares.get(k, 0) * 100:.1f}%</title></rect>"
            )
            x += w
    for i, k in enumerate(keys):
        x, y = left + (i % 2) * 280, 90 + (i // 2) * 18
        colour = PALETTE[i % len(PALETTE)]
        out.append(
            f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
            f'<text x="{x + 18}" y="{y}">{escape(labels.get(k, k))} {before[k] * 100:.0f}%</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def choices_svg(counts: Counter[str], options: list[str], answer: str, title: str) -> str:
    """A bar per option: how many students locked it; the right one in green."""
    row_h, left = 26, 40
    h = 10 + row_h * len(options)
    top = max(max(counts.values(), default=0), 1)
    described = "; ".join(f"{o}: {counts.get(o, 0)}" for o in options) + f"; right: {answer}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" '
        f'aria-label="{escape(title)}" font-family="system-ui, sans-serif" font-size="12">',
        f"<desc>{escape(described)}</desc>",
    ]
    for i, o in enumerate(options):
        y, n = 5 + i * row_h, counts.get(o, 0)
        w = (W - left - 60) * n / top
        fill = "#16a34a" if o == answer else "#94a3b8"
        out.append(
            f'<text x="0" y="{y + 15}">{escape(o)}</text>'
            f'<rect class="bar" x="{left}" y="{y}" width="{w:.1f}" height="18" fill="{fill}"/>'
            f'<text x="{left + w + 6:.1f}" y="{y + 14}">{n}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def histogram_bins(
    values: list[float], truth: float, bins: int = 12
) -> list[tuple[float, float, int]]:
    """(from, to, how many) of the locked numbers in equal bins spanning them and the truth;
    the chart draws these and the page lists them as a table."""
    if not values:
        return []
    lo, hi = min([*values, truth]), max([*values, truth])
    if hi == lo:
        hi = lo + 1
    width = (hi - lo) / bins
    counts = Counter(min(int((v - lo) / width), bins - 1) for v in values)
    return [(lo + b * width, lo + (b + 1) * width, counts.get(b, 0)) for b in range(bins)]


def histogram_svg(values: list[float], truth: float, unit: str, title: str, bins: int = 12) -> str:
    """The locked numbers in equal bins, with the true value as a red line."""
    rows = histogram_bins(values, truth, bins)
    if not rows:
        return ""
    lo, hi = rows[0][0], rows[-1][1]
    width = (hi - lo) / bins
    counts = {b: n for b, (_, _, n) in enumerate(rows)}
    h, left, bottom = 180, 30, 30
    top = max(counts.values())
    step = (W - left - 10) / bins
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" '
        f'aria-label="{escape(title)}" font-family="system-ui, sans-serif" font-size="11">',
        f"<desc>{len(values)} predictions from {lo:.3g} to {hi:.3g} {escape(unit)}; "
        f"true value {truth:.4g} {escape(unit)}</desc>",
    ]
    for b in range(bins):
        n = counts.get(b, 0)
        bh = (h - bottom - 15) * n / top
        x = left + b * step
        out.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{h - bottom - bh:.1f}" width="{step - 2:.1f}" '
            f'height="{bh:.1f}" fill="#2957c4"><title>{lo + b * width:.3g}–'
            f"{lo + (b + 1) * width:.3g}: {n}</title></rect>"
        )
    tx = left + (truth - lo) / (hi - lo) * (W - left - 10)
    out.append(
        f'<line class="truth" x1="{tx:.1f}" x2="{tx:.1f}" y1="10" y2="{h - bottom}" '
        'stroke="#b3261e" stroke-width="2"/>'
        f'<text x="{tx + 4:.1f}" y="20" fill="#b3261e">true {truth:.3g} {escape(unit)}</text>'
        f'<text x="{left}" y="{h - 8}">{lo:.3g}</text>'
        f'<text x="{W - 10}" y="{h - 8}" text-anchor="end">{hi:.3g} {escape(unit)}</text></svg>'
    )
    return "\n".join(out)
