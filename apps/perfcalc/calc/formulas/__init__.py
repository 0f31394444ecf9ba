"""Importing this package registers every formula in `registry.FORMULAS`."""

from apps.perfcalc.calc.formulas import (  # noqa: F401
    collectives,
    communication,
    fleet,
    inverse,
    memory,
    parallelism,
    reliability,
    roofline,
    scaling,
    serving,
    training,
)
