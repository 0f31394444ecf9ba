"""Answer counts as horizontal bars, one small SVG per question."""

from __future__ import annotations

from html import escape


def bars_svg(title: str, rows: list[tuple[str, int]]) -> str:
    w, row_h, label_w = 520, 22, 250
    peak = max((n for _, n in rows), default=0) or 1
    h = row_h * len(rows) + 8
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="chart" '
        f'aria-label="{escape(title)}" font-family="system-ui, sans-serif" '
        f'font-size="11"><title>{escape(title)}</title>'
    ]
    for i, (label, n) in enumerate(rows):
        y = 4 + i * row_h
        bw = (w - label_w - 40) * n / peak
        out.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{escape(label[:40])}</text>'
        )
        out.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{bw:.1f}" height="{row_h - 6}" '
            f'fill="#2957c4"><title>{escape(label)}: {n}</title></rect>'
        )
        out.append(f'<text x="{label_w + bw + 4:.1f}" y="{y + 14}">{n}</text>')
    out.append("</svg>")
    return "\n".join(out)
