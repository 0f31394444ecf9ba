"""The performance calculator: pure functions of plain values, no Django.

Every formula validates its inputs (a bad one raises `InputError` naming the field), returns a
`Result` with the value, its unit, any classification and a worked solution, and has a batch
form over numpy arrays. `registry.FORMULAS` lists them all for the API, pages and autograder.
"""

from apps.perfcalc.calc.core import InputError, Result

__all__ = ["InputError", "Result"]
