"""Quantities with units → numbers in the calculator's base units.

Decimal prefixes are decimal (GB = 10⁹ B, TB/s = 10¹² B/s); binary ones only by name (GiB).
Bits are bits (400 Gb/s = 50 GB/s). `parse(text, unit)` accepts a plain number (already in the
base unit), '1,979', '5.6e-1', '35%' (for fractions), and '560 ms' where the unit has a
dimension; a unit of the wrong dimension is refused by name.
"""

from __future__ import annotations

import re
from typing import Any

_DEC = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BIN = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}


def _prefixed(bases: dict[str, float], *, binary: bool = False) -> dict[str, float]:
    out: dict[str, float] = {}
    for base, factor in bases.items():
        for prefix, scale in _DEC.items():
            out[prefix + base] = scale * factor
        if binary:
            for prefix, scale in _BIN.items():
                out[prefix + base] = scale * factor
    return out


UNITS: dict[str, dict[str, float]] = {
    "B": {
        **_prefixed({"B": 1.0, "byte": 1.0, "bytes": 1.0}, binary=True),
        **_prefixed({"b": 0.125, "bit": 0.125, "bits": 0.125}),
    },
    "B/s": {
        **_prefixed({"B/s": 1.0, "Bps": 1.0}, binary=True),
        **_prefixed({"b/s": 0.125, "bit/s": 0.125, "bps": 0.125}),
    },
    "FLOP": _prefixed({"FLOP": 1.0, "FLOPs": 1.0, "flop": 1.0, "flops": 1.0}),
    "FLOP/s": _prefixed({"FLOP/s": 1.0, "FLOPS": 1.0, "flop/s": 1.0, "OPS": 1.0, "OP/s": 1.0}),
    "s": {
        "s": 1.0,
        "sec": 1.0,
        "secs": 1.0,
        "second": 1.0,
        "seconds": 1.0,
        "ms": 1e-3,
        "millisecond": 1e-3,
        "milliseconds": 1e-3,
        "microsecond": 1e-6,
        "microseconds": 1e-6,
        "nanosecond": 1e-9,
        "nanoseconds": 1e-9,
        "us": 1e-6,
        "µs": 1e-6,
        "μs": 1e-6,
        "ns": 1e-9,
        "min": 60.0,
        "mins": 60.0,
        "minute": 60.0,
        "minutes": 60.0,
        "h": 3600.0,
        "hr": 3600.0,
        "hrs": 3600.0,
        "hour": 3600.0,
        "hours": 3600.0,
        "d": 86400.0,
        "day": 86400.0,
        "days": 86400.0,
        "week": 604800.0,
        "weeks": 604800.0,
    },
    "kWh": {
        **{k: v / 1e3 for k, v in _prefixed({"Wh": 1.0}).items()},
        **{k: v / 3.6e6 for k, v in _prefixed({"J": 1.0}).items()},
    },
    "W": _prefixed({"W": 1.0}),
    "g/kWh": {
        "g/kWh": 1.0,
        "gCO2/kWh": 1.0,
        "gCO2e/kWh": 1.0,
        "kg/MWh": 1.0,
        "t/GWh": 1.0,
        "kg/kWh": 1e3,
    },
    # CO2 by mass, in tonnes (the calculator's carbon() answers in tonnes of CO2).
    "t": {
        "t": 1.0,
        "tonne": 1.0,
        "tonnes": 1.0,
        "tCO2": 1.0,
        "tCO2e": 1.0,
        "kt": 1e3,
        "Mt": 1e6,
        "kg": 1e-3,
        "kgCO2": 1e-3,
        "g": 1e-6,
        "gCO2": 1e-6,
    },
    # Counts (parameters, tokens): 7B = 7e9 parameters, 1.4T tokens.
    "count": {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "bn": 1e9},
    "QPS": {"QPS": 1.0, "qps": 1.0, "req/s": 1.0, "/s": 1.0},
    "tokens/s": {"tokens/s": 1.0, "tok/s": 1.0, "k tokens/s": 1e3},
}
# Which dimension a unit belongs to, to name it when it is used in the wrong place.
_DIMENSION_OF = {
    suffix: dim
    for dim, table in UNITS.items()
    if dim != "count"
    for suffix in table
    if suffix not in {"/s"}
}
_NAMES = {
    "B": "bytes",
    "B/s": "bandwidth",
    "FLOP": "an amount of compute (FLOP)",
    "FLOP/s": "a compute rate (FLOP/s)",
    "s": "a time",
    "kWh": "energy",
    "W": "power",
    "g/kWh": "a carbon intensity",
    "t": "a mass of CO2",
    "QPS": "a request rate",
    "tokens/s": "a token rate",
    "count": "a count (7B = 7 billion)",
}
EXAMPLES = {
    "B": "16 GB",
    "B/s": "3.35 TB/s",
    "FLOP": "32 GFLOP",
    "FLOP/s": "989 TFLOPS",
    "s": "40 ms",
    "kWh": "500 MWh",
    "W": "700 W",
    "g/kWh": "390 g/kWh",
    "t": "195 t",
    "QPS": "1000",
    "tokens/s": "3000",
    "count": "70B",
}

# A mantissa is required (digits, optionally with thousands commas and a fraction, or .5).
_NUMBER = r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*(.*?)\s*$")


RATIO_SIGNS = {"x", "X", "\u00d7"}  # how people write a speed-up or a ratio: 1.5x, 1.5×


class UnitError(ValueError):
    pass


def resolve(unit: str) -> tuple[str, float]:
    """A unit an answer may be asked in → (its dimension, its size in the dimension's base):
    'ms' → ('s', 1e-3), 'TFLOP/s' → ('FLOP/s', 1e12), 'GB' → ('B', 1e9), 's' → ('s', 1.0).
    '' and 'fraction' are plain numbers. Raises UnitError for a unit no table knows."""
    if unit in {"", "fraction"} or unit in UNITS:
        return unit, 1.0
    for dim, table in UNITS.items():
        if dim != "count" and unit in table:
            return dim, table[unit]
    raise UnitError(f"unknown unit {unit!r}")


def name_of(unit: str) -> str:
    """How a page names the unit an answer is in ('ms', 'TFLOP/s'; '' for a plain number)."""
    return "" if unit in {"", "fraction"} else unit


def parse_number(text: str) -> float:
    """'1,979' → 1979.0; '5.6e-1' → 0.56; refuses anything else."""
    t = text.strip().replace("\u2212", "-")
    if not re.fullmatch(_NUMBER, t) or not re.search(r"\d", t):
        raise UnitError(f"{text.strip()!r} is not a number")
    try:
        return float(t.replace(",", ""))
    except ValueError:
        raise UnitError(f"{text.strip()!r} is not a number") from None


def parse(value: Any, unit: str) -> float:
    """A number in `unit` from a number or a quantity string. Raises UnitError with a reason."""
    if isinstance(value, bool):
        raise UnitError("must be a number")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        raise UnitError("must be a number or a quantity like " + EXAMPLES.get(unit, "2.5"))
    text = value.strip().replace("\u2212", "-").replace("\u00a0", " ")
    if not text:
        raise UnitError("is empty")
    if text.endswith("%") and unit in {"", "fraction"}:
        return parse_number(text[:-1]) / 100.0
    # A speed-up or another ratio, written "1.087x" or "1.087 ×".
    if text[-1:] in RATIO_SIGNS and text[:-1].strip() and unit in {"", "fraction"}:
        return parse_number(text[:-1].rstrip())
    match = _QUANTITY.match(text)
    if match is None or not re.search(r"\d", match.group(1)):
        raise UnitError(f"{text!r} is not a number")
    number = parse_number(match.group(1))
    suffix = match.group(2).strip()
    if not suffix:
        return number
    if suffix[0] in ",.0123456789":
        raise UnitError(f"{text!r} is not a number")
    if _bit_byte_ambiguous(suffix, unit) and suffix not in UNITS[unit]:
        raise UnitError(f"{suffix!r} is ambiguous: write B for bytes or b for bits (e.g. GB or Gb)")
    table = UNITS.get(unit)
    if table is not None:
        if suffix in table:
            return number * table[suffix]
        folded = {k.lower(): v for k, v in table.items()}
        if suffix.lower() in folded and not _bit_byte_ambiguous(suffix, unit):
            return number * folded[suffix.lower()]
    other = _DIMENSION_OF.get(suffix)
    if other is not None and other != unit:
        raise UnitError(
            f"{suffix!r} is {_NAMES.get(other, other)}; this field takes "
            f"{_NAMES.get(unit, unit or 'a plain number')}"
            + (f", e.g. {EXAMPLES[unit]}" if unit in EXAMPLES else "")
        )
    hint = f", e.g. {EXAMPLES[unit]}" if unit in EXAMPLES else ""
    raise UnitError(
        f"unknown unit {suffix!r}" + (f" for {_NAMES.get(unit, unit)}{hint}" if unit else "")
    )


def _bit_byte_ambiguous(suffix: str, unit: str) -> bool:
    # 'gb' could be gigabits or gigabytes: only the exact case decides.
    return (
        unit in {"B", "B/s"}
        and suffix.lower().startswith(tuple("kmgtpe"))
        and "b" in suffix.lower()
    )
