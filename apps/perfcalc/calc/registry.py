"""Every formula, described once: its parameters (unit, help, kind), its scalar function with a
worked solution, and its batch (numpy) form. The API, the pages and the autograder read this."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from apps.perfcalc.calc import core, units
from apps.perfcalc.calc.core import InputError, Result

KINDS = (
    "positive",
    "nonnegative",
    "fraction",
    "fraction_pos",
    "factor",
    "int",
    "choice",
    "fractions",
    "factors",
    "bool",
)


@dataclass(frozen=True)
class Param:
    name: str
    label: str
    unit: str  # the unit a plain number is taken in ("B", "B/s", "FLOP", "s", …; "" = count)
    help: str
    kind: str = "positive"
    default: Any = None  # None: required
    choices: tuple[str, ...] = ()
    minimum: int = 1
    maximum: int = 10**9

    @property
    def required(self) -> bool:
        return self.default is None

    def check(self, raw: Any) -> Any:
        """Parse (numbers or quantity strings) and validate one input value."""
        n = self.name
        if self.kind == "choice":
            return core.choice(n, raw, self.choices)
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in {"true", "false", "1", "0", "on", "off"}:
                return raw.lower() in {"true", "1", "on"}
            raise InputError(n, "must be true or false")
        if self.kind in {"fractions", "factors"}:
            return self._check_list(raw)
        try:
            value = units.parse(raw, "fraction" if self.kind.startswith("fraction") else self.unit)
        except units.UnitError as exc:
            raise InputError(n, str(exc)) from None
        if self.kind == "positive":
            return core.positive(n, value)
        if self.kind == "nonnegative":
            return core.nonnegative(n, value)
        if self.kind == "fraction":
            return core.fraction(n, value)
        if self.kind == "fraction_pos":
            return core.fraction(n, value, allow_zero=False)
        if self.kind == "factor":
            return core.at_least_one(n, value)
        if self.kind == "int":
            return core.whole(n, value, minimum=self.minimum, maximum=self.maximum)
        raise AssertionError(self.kind)  # pragma: no cover

    def _check_list(self, raw: Any) -> tuple[float, ...]:
        if isinstance(raw, str):
            raw = [x for x in raw.replace(";", ",").split(",") if x.strip()]
        if not isinstance(raw, list | tuple) or not raw:
            raise InputError(self.name, "must be a non-empty list of numbers")
        if len(raw) > 64:
            raise InputError(self.name, "at most 64 items")
        item = Param(
            self.name,
            self.label,
            self.unit,
            self.help,
            kind="fraction" if self.kind == "fractions" else "factor",
        )
        out = []
        for i, x in enumerate(raw):
            try:
                out.append(item.check(x))
            except InputError as exc:
                raise InputError(self.name, f"item {i + 1}: {exc.message}") from None
        return tuple(out)


@dataclass(frozen=True)
class Formula:
    name: str
    title: str
    topic: str
    summary: str
    params: tuple[Param, ...]
    func: Callable[..., Result]
    vector: Callable[..., Any] | None = None  # numpy math over the numeric params
    result_unit: str = ""
    example: dict[str, Any] = field(default_factory=dict)
    uses_gpu: bool = False  # peak/bandwidth/memory can come from the catalog (gpu, precision)
    # parameter → model-catalog figure that `model=<key>` fills it from (e.g. "layers": "layers")
    model_fields: dict[str, str] = field(default_factory=dict)
    do_not_call_in_templates: ClassVar[bool] = True  # Django templates would call it

    @property
    def uses_model(self) -> bool:
        return bool(self.model_fields)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        """All inputs checked; every bad field reported together (InputErrors)."""
        unknown = sorted(set(raw) - {p.name for p in self.params})
        errors: list[InputError] = [
            InputError(k, "is not an input of this formula") for k in unknown
        ]
        clean: dict[str, Any] = {}
        for p in self.params:
            value = raw.get(p.name)
            if value is None or value == "":
                if p.required:
                    errors.append(InputError(p.name, "is required"))
                    continue
                value = p.default
            try:
                clean[p.name] = p.check(value)
            except InputError as exc:
                errors.append(exc)
        if errors:
            raise InputErrors(errors)
        return clean

    def __call__(self, **raw: Any) -> Result:
        clean = self.validate(raw)
        result = self.func(**clean)
        core.finite_result(self.name, result.value)
        return dataclasses.replace(result, inputs=clean)


class InputErrors(InputError):
    """Several bad inputs at once; `.errors` lists each."""

    def __init__(self, errors: list[InputError]) -> None:
        first = errors[0]
        super().__init__(first.field, first.message)
        self.errors = errors

    def as_dict(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for e in self.errors:
            out.setdefault(e.field, []).append(e.message)
        return out


FORMULAS: dict[str, Formula] = {}
TOPICS = {
    "roofline": "Roofline and decode",
    "memory": "Memory and GPUs per replica",
    "communication": "AllReduce",
    "training": "Training time and MFU",
    "fleet": "Fleet, energy and carbon",
    "inverse": "Inverse design",
    "scaling": "Scaling laws and pipeline bubbles",
    "reliability": "Checkpointing and reliability",
    "collectives": "Collectives across GPUs and nodes",
    "parallelism": "Parallel layouts: memory, activations and step time",
    "serving": "Inference and serving",
}


def register(
    *,
    name: str,
    title: str,
    topic: str,
    summary: str,
    params: list[Param],
    result_unit: str,
    vector: Callable[..., Any] | None = None,
    example: dict[str, Any] | None = None,
    uses_gpu: bool = False,
    model_fields: dict[str, str] | None = None,
) -> Callable[[Callable[..., Result]], Formula]:
    """`model_fields` overrides which catalog figure fills a parameter under `model=`; a
    parameter named like a figure (layers, kv_heads, head_dim, …) is filled from it anyway."""
    from apps.perfcalc.calc.catalog import MODEL_FIELDS

    def wrap(func: Callable[..., Result]) -> Formula:
        fields = {p.name: p.name for p in params if p.name in MODEL_FIELDS}
        fields.update(model_fields or {})
        f = Formula(
            name,
            title,
            topic,
            summary,
            tuple(params),
            func,
            vector,
            result_unit,
            example or {},
            uses_gpu,
            fields,
        )
        FORMULAS[name] = f
        return f

    return wrap


def get(name: str) -> Formula:
    from apps.perfcalc.calc import formulas  # noqa: F401 - registers every formula

    if name not in FORMULAS:
        raise InputError("formula", f"unknown formula {name!r}")
    return FORMULAS[name]


def all_formulas() -> dict[str, Formula]:
    from apps.perfcalc.calc import formulas  # noqa: F401

    return FORMULAS


# ------------------------------------------------------------------ batch evaluation


@dataclass
class BatchResult:
    values: np.ndarray  # float64; rows with an error hold 0 and valid[i] is False
    valid: np.ndarray  # bool
    errors: list[str | None]
    extras: dict[str, np.ndarray]


_VECTOR_CHECKS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "positive": lambda a: (a >= core.MIN_MAGNITUDE) & (a <= core.MAX_MAGNITUDE),
    "nonnegative": lambda a: (a == 0) | ((a >= core.MIN_MAGNITUDE) & (a <= core.MAX_MAGNITUDE)),
    "fraction": lambda a: (a == 0) | ((a >= core.MIN_MAGNITUDE) & (a <= 1)),
    "fraction_pos": lambda a: (a >= core.MIN_MAGNITUDE) & (a <= 1),
    "factor": lambda a: (a >= 1) & (a <= core.MAX_MAGNITUDE),
}


def evaluate_batch(name: str, inputs: dict[str, Any]) -> BatchResult:
    """Evaluate a formula over arrays (scalars broadcast). Invalid rows are reported per row,
    never as NaN, and never stop the batch. Choice/bool parameters must be scalars."""
    f = get(name)
    if f.vector is None:
        raise InputError("formula", f"{name} has no batch form")
    unknown = sorted(set(inputs) - {p.name for p in f.params})
    if unknown:
        raise InputError(unknown[0], "is not an input of this formula")
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    for p in f.params:
        raw = inputs.get(p.name, p.default)
        if raw is None:
            raise InputError(p.name, "is required")
        if p.kind in {"choice", "bool", "fractions", "factors"}:
            scalars[p.name] = p.check(raw)
        else:
            try:
                arrays[p.name] = np.asarray(raw, dtype=np.float64)
            except (TypeError, ValueError):
                raise InputError(p.name, "must be numbers") from None
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    except ValueError:
        raise InputError("__all__", "input arrays have different lengths") from None
    arrays = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    valid = np.ones(shape, dtype=bool)
    first_bad: dict[str, np.ndarray] = {}
    for p in f.params:
        if p.name not in arrays:
            continue
        a = arrays[p.name]
        with np.errstate(invalid="ignore"):
            if p.kind == "int":
                ok = (a == np.floor(a)) & (a >= p.minimum) & (a <= p.maximum)
            else:
                ok = _VECTOR_CHECKS[p.kind](a)
        ok &= np.isfinite(a)
        first_bad[p.name] = ~ok & valid
        valid &= ok
    safe = {
        k: np.where(valid, a, 1.0 if f.param(k).kind != "fraction" else 0.5)
        for k, a in arrays.items()
    }
    out = f.vector(**safe, **scalars)
    values, extras = out if isinstance(out, tuple) else (out, {})
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        values = np.asarray(
            np.broadcast_to(np.asarray(values, dtype=np.float64), shape), dtype=np.float64
        )
    # A formula may have no finite answer for valid inputs (a queue at saturation): that row is
    # refused with a reason, never returned as inf or NaN.
    no_answer = valid & ~np.isfinite(values)
    valid &= ~no_answer
    values = np.where(valid, values, 0.0)
    errors: list[str | None] = [None] * int(np.prod(shape)) if shape else [None]
    for i in np.flatnonzero(no_answer.reshape(-1)):
        errors[i] = "no finite result for these inputs (e.g. a queue at or above saturation)"
    with np.errstate(invalid="ignore"):
        extras = {
            k: np.where(
                valid & np.isfinite(np.broadcast_to(np.asarray(v, dtype=np.float64), shape)),
                np.broadcast_to(np.asarray(v, dtype=np.float64), shape),
                0.0,
            )
            for k, v in extras.items()
        }
    if not valid.all():
        flat = {k: v.reshape(-1) for k, v in first_bad.items()}
        for i in np.flatnonzero(~valid.reshape(-1) & ~no_answer.reshape(-1)):
            field_name = next(k for k, v in flat.items() if v[i])
            errors[i] = f"{field_name}: out of range or not a number"
    return BatchResult(values=values, valid=valid, errors=errors, extras=extras)
