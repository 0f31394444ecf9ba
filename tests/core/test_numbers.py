"""One display rule for numbers: significant figures, never trailing zeros from a format."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core.numbers import sig


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (195, "195"),
        (0.6, "0.6"),
        ("0.600000", "0.6"),
        (0.55125, "0.5513"),
        (1979, "1,979"),
        (1979.0, "1,979"),
        (123456, "123,500"),
        (2.5e-5, "2.5e-05"),
        (0, "0"),
        (-0.25, "-0.25"),
        (40.0, "40"),
        (100, "100"),
        (4.776e-3, "0.004776"),
        (1e18, "1e+18"),
        (None, ""),
        ("abc", "abc"),
    ],
)
def test_numbers_read_the_way_a_person_writes_them(value, shown: str) -> None:  # type: ignore[no-untyped-def]
    assert sig(value) == shown


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e20, max_value=1e20))
def test_no_number_is_shown_with_trailing_zeros_and_it_reads_back_close(x: float) -> None:
    shown = sig(x)
    mantissa = shown.split("e")[0]
    if "." in mantissa:
        assert not mantissa.endswith("0")
    back = float(shown.replace(",", ""))
    assert back == pytest.approx(x, rel=1e-3, abs=1e-300)
