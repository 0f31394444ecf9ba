"""Small multiples: for each component, how many students scored in each tenth (0–9 %, …,
90–100 %), the satisfactory threshold drawn as a red line, and how many have no score yet."""

from __future__ import annotations

from html import escape


def distribution_table(
    rows: list[tuple[str, list[float | None], float]],
) -> list[dict[str, object]]:
    """The histograms' numbers, for the table under the chart: per component, the count in each
    tenth, how many have no score, and the threshold."""
    out = []
    for name, scores, threshold in rows:
        known = [s for s in scores if s is not None]
        bins = [0] * 10
        for s in known:
            bins[min(int(s // 10), 9)] += 1
        out.append(
            {
                "name": name,
                "bins": bins,
                "missing": len(scores) - len(known),
                "threshold": threshold,
            }
        )
    return out


def distributions_svg(rows: list[tuple[str, list[float | None], float]]) -> str:
    """One accessible SVG holding one small histogram per (name, scores, threshold)."""
    cw, ch, cols = 250, 165, 3
    n_rows = -(-len(rows) // cols)
    w, h = cw * cols, ch * n_rows
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="chart" '
        'aria-label="Score distribution per component" font-family="system-ui, sans-serif" '
        'font-size="10">',
        "<title>Score distribution per component</title>",
    ]
    for i, (name, scores, threshold) in enumerate(rows):
        x0, y0 = (i % cols) * cw, (i // cols) * ch
        known = [s for s in scores if s is not None]
        bins = [0] * 10
        for s in known:
            bins[min(int(s // 10), 9)] += 1
        peak = max(bins) or 1
        left, top, bottom, bw = x0 + 12, y0 + 34, y0 + ch - 26, (cw - 24) / 10
        missing = len(scores) - len(known)
        counts = f"{len(known)} scored" + (f", {missing} without a score" if missing else "")
        out.append(
            f'<text x="{x0 + 12}" y="{y0 + 13}" font-weight="600">{escape(name[:38])}</text>'
        )
        out.append(f'<text x="{x0 + 12}" y="{y0 + 26}" fill="#555">{escape(counts)}</text>')
        for b, count in enumerate(bins):
            bh = (bottom - top) * count / peak
            out.append(
                f'<rect x="{left + b * bw + 1:.1f}" y="{bottom - bh:.1f}" width="{bw - 2:.1f}" '
                f'height="{bh:.1f}" fill="#2957c4"><title>{escape(name)}: {count} between '
                f"{b * 10} and {b * 10 + 10} %</title></rect>"
            )
        out.extend(
            f'<text x="{left + tick / 10 * bw:.1f}" y="{bottom + 12}" '
            f'text-anchor="middle">{tick}</text>'
            for tick in (0, 50, 100)
        )
        if threshold > 0:
            tx = left + threshold / 10 * bw
            out.append(
                f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top}" y2="{bottom}" stroke="#b3261e" '
                f'stroke-width="2"><title>satisfactory from {threshold:g} %</title></line>'
            )
    out.append("</svg>")
    return "\n".join(out)
