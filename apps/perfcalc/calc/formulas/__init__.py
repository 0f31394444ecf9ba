"""Importing this package registers every formula in `registry.FORMULAS`."""

from apps.perfcalc.calc.formulas import (  # noqa: F401
    communication,
    fleet,
    inverse,
    memory,
    reliability,
    roofline,
    scaling,
    training,
)
