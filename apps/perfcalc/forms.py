"""Calculator forms, built from the registry so every field has its unit and help text."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.perfcalc.calc import catalog
from apps.perfcalc.calc.catalog import GPU, PRECISIONS
from apps.perfcalc.calc.registry import Formula
from apps.perfcalc.calc.units import EXAMPLES

UNIT_WORDS = {"": "", "fraction": "fraction or %", "count": "count, e.g. 70B"}


def formula_form(formula: Formula, gpus: dict[str, GPU], data: Any = None) -> forms.Form:
    fields: dict[str, forms.Field] = {}
    for p in formula.params:
        unit = UNIT_WORDS.get(p.unit, p.unit)
        label = f"{p.label} ({unit})" if unit else p.label
        example = formula.example.get(p.name, EXAMPLES.get(p.unit, ""))
        if p.kind == "choice":
            fields[p.name] = forms.ChoiceField(
                label=label,
                choices=[(c, c) for c in p.choices],
                initial=p.default,
                required=False,
                help_text=p.help,
            )
        else:
            shown = ", ".join(map(str, example)) if isinstance(example, list) else example
            fields[p.name] = forms.CharField(
                label=label,
                required=False,
                help_text=p.help + ("" if p.required else f" Default {p.default}."),
                widget=forms.TextInput(
                    attrs={"placeholder": f"e.g. {shown}", "autocomplete": "off"}
                ),
            )
    if formula.uses_model:
        fields["model"] = forms.ChoiceField(
            label="Model from the catalog",
            required=False,
            choices=[("", "— type the dimensions in instead —")]
            + [(k, m.name) for k, m in catalog.models().items()],
            help_text="Fills "
            + ", ".join(formula.model_fields)
            + " where you leave them empty, and cites the source.",
        )
        for name in formula.model_fields:  # optional on the page when a model can fill them
            fields[name].help_text += " Filled from the model if empty."
    if formula.uses_gpu:
        fields["gpu"] = forms.ChoiceField(
            label="GPU from the catalog",
            required=False,
            choices=[("", "— type the figures in instead —")]
            + [(k, g.name) for k, g in gpus.items()],
            help_text="Fills the peak, bandwidth and memory fields you leave empty, and cites the "
            "source.",
        )
        fields["gpu_precision"] = forms.ChoiceField(
            label="Precision of the peak",
            choices=[(p, p.upper()) for p in PRECISIONS],
            initial="bf16",
            required=False,
            help_text="Dense figures unless you tick sparse.",
        )
        fields["sparse"] = forms.BooleanField(
            label="Use the 2:4-sparse peak",
            required=False,
            help_text="Datasheet headline numbers (e.g. 1,979 TFLOPS FP16 on H100 SXM) are sparse.",
        )
    form_class = type(f"{formula.name}Form", (forms.Form,), fields)
    if (
        data is not None
    ):  # a shared URL may leave choices out: show the defaults, not the first option
        data = data.copy()
        # base_fields, not `fields`: the form metaclass pops the declared fields out of that dict.
        for name, field in form_class.base_fields.items():  # type: ignore[attr-defined]
            if isinstance(field, forms.ChoiceField) and not data.get(name) and field.initial:
                data[name] = field.initial
    return form_class(data)
