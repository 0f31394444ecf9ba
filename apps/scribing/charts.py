"""Server-rendered SVG charts for the scribing board (no script, no CDN): scribes per lecture,
and satisfied vs wanted preferences by rank."""

from __future__ import annotations

from html import escape

W = 640


def loads_svg(bars: list[tuple[str, int]]) -> str:
    """A column per lecture, its height the number of scribes; balanced loads look flat."""
    if not bars:
        return ""
    h, top, bottom, left = 180, 20, 30, 30
    top_value = max(max(v for _, v in bars), 1)
    step = (W - left - 10) / len(bars)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" '
        f'aria-labelledby="loads-t loads-d" '
        f'class="stacked" font-family="system-ui, sans-serif" font-size="10">',
        '<title id="loads-t">Scribes per lecture</title>',
        f'<desc id="loads-d">{escape("; ".join(f"{k}: {v}" for k, v in bars))}</desc>',
    ]
    for i, (label, v) in enumerate(bars):
        bh = (h - top - bottom) * v / top_value
        x = left + i * step
        out.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{h - bottom - bh:.1f}" '
            f'width="{max(step - 2, 1):.1f}" '
            f'height="{bh:.1f}" fill="#2957c4"><title>{escape(label)}: {v}</title></rect>'
        )
        if len(bars) <= 40:
            out.append(
                f'<text x="{x + step / 2:.1f}" y="{h - bottom + 12}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
            out.append(
                f'<text x="{x + step / 2:.1f}" y="{h - bottom - bh - 3:.1f}" '
                f'text-anchor="middle">{v}</text>'
            )
    out.append(f'<text x="{left}" y="12">Scribes per lecture (max {top_value})</text></svg>')
    return "\n".join(out)


def ranks_svg(rows: list[tuple[str, int, int]]) -> str:
    """For each rank: how many students asked for a lecture at that rank, and how many got it."""
    if not rows:
        return ""
    row_h, left = 26, 90
    h = 24 + row_h * len(rows)
    top_value = max(max(w for _, _, w in rows), 1)
    span = W - left - 140
    described = "; ".join(f"{k}: {got} of {w}" for k, got, w in rows)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" role="img" '
        f'aria-labelledby="ranks-t ranks-d" '
        f'class="stacked" font-family="system-ui, sans-serif" font-size="12">',
        '<title id="ranks-t">Preferences satisfied by rank</title>',
        f'<desc id="ranks-d">{escape(described)}</desc>',
        '<text x="0" y="14">Preferences satisfied (dark) of those asked (light)</text>',
    ]
    for i, (label, got, wanted) in enumerate(rows):
        y = 24 + i * row_h
        out.append(f'<text x="0" y="{y + 15}">{escape(label)}</text>')
        out.append(
            f'<rect x="{left}" y="{y + 3}" width="{span * wanted / top_value:.1f}" height="16" '
            'fill="#c9d6f5"/>'
        )
        out.append(
            f'<rect class="got" x="{left}" y="{y + 3}" width="{span * got / top_value:.1f}" '
            f'height="16" fill="#1e7b34"/>'
        )
        pct = f" ({100 * got / wanted:.0f} %)" if wanted else ""
        out.append(f'<text x="{left + span + 6}" y="{y + 15}">{got} of {wanted}{pct}</text>')
    out.append("</svg>")
    return "\n".join(out)
