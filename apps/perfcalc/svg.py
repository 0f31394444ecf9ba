"""Server-rendered roofline plots (log-log SVG, no JavaScript, no CDN)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from apps.perfcalc.calc.core import fmt, sig

W, H = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 96, 20, 30, 52
COLORS = [
    "#2957c4",
    "#c0392b",
    "#1e7b34",
    "#8e44ad",
    "#d35400",
    "#16a085",
    "#7f8c8d",
    "#b7950b",
    "#34495e",
]


@dataclass(frozen=True)
class Roof:
    label: str
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float

    @property
    def ridge(self) -> float:
        return self.peak_flops_per_s / self.bandwidth_bytes_per_s


@dataclass(frozen=True)
class Point:
    label: str
    intensity: float  # FLOP/B
    flops_per_s: float | None = None  # attained FLOP/s; None draws a vertical intensity marker


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def roofline_svg(roofs: list[Roof], points: list[Point], *, title: str = "Roofline") -> str:
    """An accessible SVG: roofs (min(peak, AI·BW)), dashed ridge lines, labelled points."""
    xs = [r.ridge for r in roofs] + [p.intensity for p in points]
    x0, x1 = _decades(min(min(xs) / 10, 0.1), max(max(xs) * 10, 1e3))
    attained = [p.flops_per_s for p in points if p.flops_per_s]
    peaks = [r.peak_flops_per_s for r in roofs] + attained
    floor_y = min([r.bandwidth_bytes_per_s * 10**x0 for r in roofs] + attained)
    y0, y1 = _decades(floor_y, max(peaks) * 1.5)

    def px(ai: float) -> float:
        return LEFT + (math.log10(ai) - x0) / (x1 - x0) * (W - LEFT - RIGHT)

    def py(f: float) -> float:
        return H - BOTTOM - (math.log10(f) - y0) / (y1 - y0) * (H - TOP - BOTTOM)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
        f'aria-labelledby="roof-title roof-desc" class="roofline" font-family="system-ui, '
        f'sans-serif" font-size="11">',
        f'<title id="roof-title">{escape(title)}</title>',
        f'<desc id="roof-desc">{escape(_describe(roofs, points))}</desc>',
        f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" '
        f'fill="#fff" stroke="#ccd"/>',
    ]
    for d in range(x0, x1 + 1):
        x = px(10**d)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" stroke="#eef"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">{sig(10.0**d)}</text>'
        )
    for d in range(y0, y1 + 1):
        y = py(10**d)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#eef"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{escape(fmt(10.0**d, "FLOP/s"))}</text>'
        )
    parts.append(
        f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 12}" text-anchor="middle">Arithmetic '
        f"intensity (FLOP/byte, log scale)</text>"
    )
    parts.append(
        f'<text transform="translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">Attainable FLOP/s (log scale)</text>'
    )

    legend = len(roofs) > 1
    legend_parts: list[str] = []  # drawn last, above the marker
    if legend:
        width = 12 + 6.2 * max(len(r.label) + 14 for r in roofs)
        legend_parts.append(
            f'<rect x="{LEFT + 4}" y="{TOP + 4}" width="{width:.0f}" '
            f'height="{14 * len(roofs) + 6}" fill="#fff" fill-opacity="0.92" stroke="#ccd"/>'
        )
    for i, r in enumerate(roofs):
        c = COLORS[i % len(COLORS)]
        xa, xr, xb = 10**x0, r.ridge, 10**x1
        pts = (
            [(xa, r.bandwidth_bytes_per_s * xa)]
            if r.bandwidth_bytes_per_s * xa < r.peak_flops_per_s
            else []
        )
        pts += [(min(max(xr, xa), xb), r.peak_flops_per_s), (xb, r.peak_flops_per_s)]
        path = " ".join(f"{px(a):.1f},{py(max(f, 10**y0)):.1f}" for a, f in pts)
        parts.append(
            f'<polyline class="roof" points="{path}" fill="none" stroke="{c}" stroke-width="2.5"/>'
        )
        parts.append(
            f'<line class="ridge" x1="{px(xr):.1f}" y1="{py(r.peak_flops_per_s):.1f}" '
            f'x2="{px(xr):.1f}" y2="{H - BOTTOM}" stroke="{c}" stroke-dasharray="4 3"/>'
        )
        if legend:
            ly = TOP + 14 + 14 * i
            legend_parts.append(
                f'<line x1="{LEFT + 8}" y1="{ly - 4}" x2="{LEFT + 26}" y2="{ly - 4}" stroke="{c}" '
                'stroke-width="3"/>'
            )
            legend_parts.append(
                f'<text class="legend" x="{LEFT + 30}" y="{ly}">{escape(r.label)} (ridge '
                f"{sig(xr, 3)})</text>"
            )
        else:
            parts.append(
                f'<text x="{px(xr) + 4:.1f}" y="{H - BOTTOM - 6}" fill="{c}">ridge {sig(xr, 3)} '
                "FLOP/B</text>"
            )
            parts.append(
                f'<text x="{W - RIGHT - 4}" y="{py(r.peak_flops_per_s) - 5:.1f}" text-anchor="end" '
                f'fill="{c}">{escape(r.label)}</text>'
            )
    for p in points:
        if p.flops_per_s is None:
            x = px(p.intensity)
            parts.append(
                f'<line class="marker" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" '
                f'stroke="#111" stroke-width="2"/>'
            )
            parts.append(
                f'<text x="{x + 5:.1f}" y="{H - BOTTOM - 8}" '
                f'font-weight="600">{escape(p.label)}</text>'
            )
            continue
        x, y = px(p.intensity), py(max(p.flops_per_s, 10**y0))
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="5.5" fill="#111" stroke="#fff" '
            'stroke-width="1.5"/>'
        )
        anchor = "start" if x < W * 0.7 else "end"
        dx = 9 if anchor == "start" else -9
        parts.append(
            f'<text x="{x + dx:.1f}" y="{y - 8:.1f}" text-anchor="{anchor}" '
            f'font-weight="600">{escape(p.label)}</text>'
        )
    parts += legend_parts
    parts.append("</svg>")
    return "\n".join(parts)


def _describe(roofs: list[Roof], points: list[Point]) -> str:
    text = "; ".join(
        f"{r.label}: peak {fmt(r.peak_flops_per_s, 'FLOP/s')}, bandwidth "
        f"{fmt(r.bandwidth_bytes_per_s, 'B/s')}, ridge {sig(r.ridge)} FLOP/B"
        for r in roofs
    )
    for p in points:
        text += f"; workload {p.label} at {sig(p.intensity)} FLOP/B"
        if p.flops_per_s:
            text += f" reaching {fmt(p.flops_per_s, 'FLOP/s')}"
    return text


def stacked_bar_svg(
    segments: list[tuple[str, float, str]],
    *,
    title: str,
    total_label: str,
    limit: tuple[str, float] | None = None,
    id_prefix: str = "bar",
) -> str:
    """One horizontal bar split into labelled parts (label, value, formatted value), a legend
    below it, and an optional limit line (e.g. the GPU's memory). Sized by viewBox: no scroll on
    a phone."""
    width, left, right, bar_y, bar_h = 640, 8, 8, 30, 34
    scale_max = max(sum(v for _, v, _ in segments), limit[1] if limit else 0.0) or 1.0
    span = width - left - right
    rows = (len(segments) + 1) // 2
    height = bar_y + bar_h + 28 + 20 * rows
    desc = "; ".join(f"{label}: {shown}" for label, _, shown in segments) + f"; total {total_label}"
    if limit:
        desc += f"; {limit[0]}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{id_prefix}-title {id_prefix}-desc" class="stacked" '
        f'font-family="system-ui, sans-serif" font-size="12">',
        f'<title id="{id_prefix}-title">{escape(title)}</title><desc '
        f'id="{id_prefix}-desc">{escape(desc)}</desc>',
        f'<text x="{left}" y="18" font-weight="600">{escape(title)}: {escape(total_label)}</text>',
    ]
    x = float(left)
    for i, (label, value, shown) in enumerate(segments):
        w = span * value / scale_max
        if w <= 0:
            continue
        out.append(
            f'<rect class="segment" x="{x:.1f}" y="{bar_y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{COLORS[i % len(COLORS)]}"><title>{escape(label)}: '
            f"{escape(shown)}</title></rect>"
        )
        if w > 46:
            out.append(
                f'<text x="{x + w / 2:.1f}" y="{bar_y + bar_h / 2 + 4}" text-anchor="middle" '
                f'fill="#fff">{escape(shown)}</text>'
            )
        x += w
    if limit:
        lx = left + span * limit[1] / scale_max
        out.append(
            f'<line class="limit" x1="{lx:.1f}" y1="{bar_y - 6}" x2="{lx:.1f}" '
            f'y2="{bar_y + bar_h + 6}" stroke="#111" stroke-width="2" stroke-dasharray="4 3"/>'
        )
        anchor = "end" if lx > width * 0.6 else "start"
        out.append(
            f'<text x="{lx + (-4 if anchor == "end" else 4):.1f}" y="{bar_y + bar_h + 18}" '
            f'text-anchor="{anchor}">{escape(limit[0])}</text>'
        )
    for i, (label, _, shown) in enumerate(segments):
        cx = left + (i % 2) * (span / 2)
        cy = bar_y + bar_h + 34 + 20 * (i // 2)
        out.append(
            f'<rect x="{cx:.1f}" y="{cy - 10}" width="12" height="12" '
            f'fill="{COLORS[i % len(COLORS)]}"/>'
        )
        out.append(f'<text x="{cx + 17:.1f}" y="{cy}">{escape(label)}: {escape(shown)}</text>')
    out.append("</svg>")
    return "\n".join(out)
