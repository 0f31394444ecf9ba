"""Shared pieces: the result type, input errors and checks, and SI formatting."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

# Inputs outside this magnitude range are refused, so no formula can overflow to inf or
# underflow a divisor to 0 (worst case 1e30 / 1e-30 = 1e60, far inside float range).
MAX_MAGNITUDE = 1e30
MIN_MAGNITUDE = 1e-30


class InputError(ValueError):
    """A bad input. `field` names it; `message` says what is wrong in words a student reads."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Result:
    formula: str
    value: float
    unit: str
    label: str
    equation: str
    steps: tuple[str, ...]
    classification: str | None = None
    convention: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)  # validated, in base units

    @property
    def display(self) -> str:
        return fmt(self.value, self.unit)

    def as_dict(self) -> dict[str, Any]:
        return {
            "formula": self.formula,
            "value": self.value,
            "unit": self.unit,
            "display": self.display,
            "label": self.label,
            "classification": self.classification,
            "convention": self.convention,
            "equation": self.equation,
            "steps": list(self.steps),
            "extras": self.extras,
            "inputs": {k: list(v) if isinstance(v, tuple) else v for k, v in self.inputs.items()},
        }


# ---------------------------------------------------------------- checks (scalar)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise InputError(name, "must be a number")
    x = float(value)
    if math.isnan(x):
        raise InputError(name, "must be a number, not NaN")
    if math.isinf(x):
        raise InputError(name, "must be finite")
    return x


def _magnitude(name: str, x: float, *, zero_ok: bool) -> float:
    """Refuse magnitudes outside [MIN_MAGNITUDE, MAX_MAGNITUDE] (0 allowed when `zero_ok`)."""
    if x > MAX_MAGNITUDE:
        raise InputError(name, f"is too large (at most {MAX_MAGNITUDE:g})")
    if 0 < x < MIN_MAGNITUDE:
        floor = f"0 or at least {MIN_MAGNITUDE:g}" if zero_ok else f"at least {MIN_MAGNITUDE:g}"
        raise InputError(name, f"is too small ({floor})")
    return x


def positive(name: str, value: Any) -> float:
    x = _number(name, value)
    if x <= 0:
        raise InputError(name, "must be greater than zero")
    return _magnitude(name, x, zero_ok=False)


def nonnegative(name: str, value: Any) -> float:
    x = _number(name, value)
    if x < 0:
        raise InputError(name, "must not be negative")
    return _magnitude(name, x, zero_ok=True)


def fraction(name: str, value: Any, *, allow_zero: bool = True) -> float:
    """A share between 0 and 1 (write 35 % as 0.35)."""
    x = _number(name, value)
    if x > 1:
        raise InputError(name, "is a fraction: at most 1 (write 35 % as 0.35)")
    if x < 0 or (x == 0 and not allow_zero):
        raise InputError(
            name, "must be greater than 0" if not allow_zero else "must not be negative"
        )
    return _magnitude(name, x, zero_ok=allow_zero)


def at_least_one(name: str, value: Any) -> float:
    x = positive(name, value)
    if x < 1:
        raise InputError(name, "is a speed-up factor: at least 1")
    return x


def whole(name: str, value: Any, *, minimum: int = 1, maximum: int = 10**9) -> int:
    x = _number(name, value)
    if x != int(x):
        raise InputError(name, "must be a whole number")
    if not minimum <= x <= maximum:
        raise InputError(name, f"must be between {minimum} and {maximum:,}")
    return int(x)


def choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in options:
        raise InputError(name, f"must be one of: {', '.join(options)}")
    return value


def finite_result(formula: str, value: float) -> float:
    if not math.isfinite(value):  # pragma: no cover - the magnitude limits rule it out
        raise InputError("__all__", f"{formula}: the inputs give no finite result")
    return value


# ---------------------------------------------------------------- formatting

_PREFIXES = [
    (1e24, "Y"),
    (1e21, "Z"),
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
]
_PREFIXABLE = {"B", "B/s", "FLOP", "FLOP/s", "s", "J", "W", "Wh", "b/s"}


def sig(x: float, digits: int = 4) -> str:
    """A number to `digits` significant figures, with thousands separators, no exponent
    below 1e15."""
    if x == 0:
        return "0"
    if abs(x) >= 1e15 or abs(x) < 1e-4:
        return f"{x:.{digits - 1}e}"
    # Drop binary noise first (1979e12 × 0.35 is 692.6499…e12), then round half up as people do.
    d = Decimal(f"{x:.12g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    d = d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{d:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def fmt(x: float, unit: str) -> str:
    """3.35e12, 'B/s' → '3.35 TB/s'; 0.56, 's' → '560 ms'; 0.35, '' → '0.35'."""
    if unit in _PREFIXABLE and x != 0 and math.isfinite(x):
        if unit == "s" and abs(x) >= 1:
            return _duration(x)
        for scale, prefix in _PREFIXES:
            if abs(x) >= scale:
                return f"{sig(x / scale)} {prefix}{unit}"
        return f"{x:.3e} {unit}"
    if unit == "fraction":
        return pct(x)
    if unit == "parameters":
        return f"{cnt(x)} parameters"
    return f"{sig(x)} {unit}".strip()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{sig(seconds)} s"
    if seconds < 2 * 3600:
        return f"{sig(seconds)} s ({sig(seconds / 60, 3)} min)"
    if seconds < 3 * 86400:
        return f"{sig(seconds)} s ({sig(seconds / 3600, 3)} h)"
    return f"{sig(seconds)} s ({sig(seconds / 86400, 3)} days)"


def cnt(x: float) -> str:
    """A count the way people say it: 70.6e9 → '70.6B', 1.4e12 → '1.4T', 4096 → '4,096'."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= scale:
            return f"{sig(x / scale)}{suffix}"
    return sig(x)


def pct(x: float) -> str:
    return f"{sig(100 * x)} %"
