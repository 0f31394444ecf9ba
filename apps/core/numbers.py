"""One rule for showing numbers to people (keys, answers, scores): 4 significant figures, no
trailing zeros, thousands separated, scientific only when a number is very small or very large.
195 → "195", 0.6 → "0.6", 0.55125 → "0.5513", 1979 → "1,979", 123456 → "123,500", 2.5e-5 →
"2.5e-05". Pure; the template filter `num` and the calculator's tables call it."""

from __future__ import annotations

import math
from decimal import Decimal


def sig(value: float | int | str | None, digits: int = 4) -> str:
    if value is None or value == "":
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) < 1e-3 or abs(x) >= 1e15:
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{exponent}"
    rounded = Decimal(f"{x:.{digits}g}")
    text = f"{rounded:,f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
