from __future__ import annotations

from django import template

from apps.perfcalc.calc.catalog import GPU
from apps.perfcalc.calc.core import cnt, fmt, sig

register = template.Library()


@register.filter
def si(value: float, unit: str) -> str:
    return fmt(float(value), unit)


@register.simple_tag
def peak_cell(gpu: GPU, precision: str) -> str:
    modes = gpu.peaks.get(precision)
    if not modes:
        return "—"
    dense = sig(modes["dense"] / 1e12) if "dense" in modes else "—"
    return f"{dense} / {sig(modes['sparse'] / 1e12)}" if "sparse" in modes else dense


@register.filter(name="count")
def count_filter(value: float) -> str:
    return cnt(float(value))
