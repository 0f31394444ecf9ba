"""Schema-describing serializers, generated from the formula registry.

Validation itself is the registry's (one place): these classes exist so every formula's inputs
and result appear, with units and help, in the OpenAPI schema.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.catalog import PRECISIONS
from apps.perfcalc.calc.registry import Formula, all_formulas


@extend_schema_field({"oneOf": [{"type": "number"}, {"type": "string"}]})
class QuantityField(serializers.Field):
    """A number in the field's unit, or a quantity string with a unit ('3.35 TB/s')."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


# What a quantity string looks like: a number (thousands commas allowed), then an optional unit.
# Whether the unit fits the field is the registry's rule (a documented 400 naming the field).
QUANTITY_PATTERN = (
    r"^\s*[+-]?(\d[\d,]*\.?\d*|\.\d+)([eE][+-]?\d+)?\s*[A-Za-z%/·µ]*[A-Za-z0-9%/·µ^]*\s*$"
)
LIMIT = 1e30  # registry: magnitudes outside [1e-30, 1e30] are refused


def _number_schema(p: Any) -> dict[str, Any]:
    """The plain-number range a parameter accepts, as JSON Schema."""
    if p.kind == "int":
        return {"type": "integer", "minimum": p.minimum, "maximum": p.maximum}
    if p.kind in {"fraction", "fraction_pos"}:
        lower: dict[str, Any] = {"minimum": 0} if p.kind == "fraction" else {"minimum": 1e-30}
        return {"type": "number", **lower, "maximum": 1}
    if p.kind == "factor":
        return {"type": "number", "minimum": 1, "maximum": LIMIT}
    if p.kind == "nonnegative":
        return {"type": "number", "minimum": 0, "maximum": LIMIT}
    return {"type": "number", "minimum": 1e-30, "maximum": LIMIT}


def quantity_field(p: Any, **kwargs: Any) -> serializers.Field:
    """A QuantityField whose schema states the parameter's range and the quantity form."""
    schema = {
        "oneOf": [
            _number_schema(p),
            {"type": "string", "pattern": QUANTITY_PATTERN, "maxLength": 64},
        ]
    }
    field_cls = extend_schema_field(schema)(type(f"Quantity_{p.name}", (QuantityField,), {}))
    return field_cls(**kwargs)


def _help(p: Any) -> str:
    unit = {
        "": "a plain number",
        "fraction": "a fraction (0.35 or '35%')",
        "count": "a count ('70B' = 7e10)",
    }.get(p.unit, p.unit)
    default = "" if p.required else f" Default: {p.default}."
    return f"{p.help} Plain numbers are taken in {unit}; strings may carry units.{default}"


@cache
def input_serializer(name: str) -> type[serializers.Serializer]:
    f: Formula = all_formulas()[name]
    fields: dict[str, serializers.Field] = {}
    for p in f.params:
        if p.kind == "choice":
            fields[p.name] = serializers.ChoiceField(
                choices=p.choices, required=False, help_text=_help(p)
            )
        elif p.kind in {"fractions", "factors"}:
            item = type(p)(
                p.name,
                p.label,
                p.unit,
                p.help,
                kind="fraction" if p.kind == "fractions" else "factor",
            )
            fields[p.name] = serializers.ListField(
                child=quantity_field(item), min_length=1, max_length=64, help_text=_help(p)
            )
        else:
            required = p.required and p.name not in f.model_fields  # `model` may fill it
            fields[p.name] = quantity_field(p, required=required, help_text=_help(p))
    if f.uses_model:
        fields["model"] = serializers.ChoiceField(
            choices=list(catalog.models()),
            required=False,
            help_text="Catalog model key (see /api/v1/perfcalc/models/) to fill the model "
            "dimensions you do not give: " + ", ".join(f.model_fields) + ".",
        )
    if f.uses_gpu:
        fields["gpu"] = serializers.CharField(
            required=False,
            help_text="Catalog GPU key (see /api/v1/perfcalc/hardware/) to fill "
            "peak, bandwidth and memory you do not give.",
        )
        fields["gpu_precision"] = serializers.ChoiceField(
            choices=PRECISIONS,
            required=False,
            help_text="Precision of the catalog peak (default bf16).",
        )
        fields["sparse"] = serializers.BooleanField(
            required=False, help_text="Use the 2:4-sparse peak instead of dense (default false)."
        )
    cls_name = "".join(part.title() for part in name.split("-")) + "Input"
    return type(cls_name, (serializers.Serializer,), {**fields, "__doc__": f.summary})


class ResultSerializer(serializers.Serializer):
    formula = serializers.CharField()
    value = serializers.FloatField(help_text="The answer, in `unit`.")
    unit = serializers.CharField()
    display = serializers.CharField(help_text="The value with an SI prefix, e.g. '4.776 ms'.")
    label = serializers.CharField()  # type: ignore[assignment]
    classification = serializers.CharField(allow_null=True, help_text="e.g. memory-bound.")
    convention = serializers.CharField(allow_null=True, help_text="The convention used, by name.")
    equation = serializers.CharField()
    steps = serializers.ListField(child=serializers.CharField(), help_text="The worked solution.")
    extras = serializers.DictField(help_text="Intermediate values (compute time, ridge point …).")
    inputs = serializers.DictField(help_text="The inputs used, in base units (SI), after parsing.")


class InputErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField()
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Each bad field with what is wrong with it.",
    )


class CallSerializer(serializers.Serializer):
    formula = serializers.CharField(help_text="Formula name, e.g. roofline-time.")
    inputs = serializers.DictField(help_text="The formula's inputs.")


class BatchRequestSerializer(serializers.Serializer):
    calls = CallSerializer(many=True, help_text="Up to 1,000 calls, answered in order.")


class BatchItemSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    result = ResultSerializer(required=False)
    errors = serializers.DictField(required=False)  # type: ignore[assignment]


class BatchResponseSerializer(serializers.Serializer):
    results = BatchItemSerializer(many=True)


class VectorRequestSerializer(serializers.Serializer):
    formula = serializers.CharField()
    inputs = serializers.DictField(
        help_text="Each numeric input a number or a list of numbers in the base unit (lists "
        "broadcast together); choices as single strings."
    )


class VectorResponseSerializer(serializers.Serializer):
    values = serializers.ListField(child=serializers.FloatField(allow_null=True))
    errors = serializers.ListField(child=serializers.CharField(allow_null=True))  # type: ignore[assignment]
    extras = serializers.DictField()
