"""The academic-integrity declaration every submission carries (the syllabus: cite external code
and AI assistants in what you submit).

One shared component: an abstract model (two fields and the database rule "yes needs a
description"), the check services call, the form fields and the API fields, the template
includes (`core/_declaration_fields.html` to ask, `core/_declaration.html` to show) and the two
export columns. Milestone links, contributions, peer reviews and impact evidence use it; the
scribe notes' sources declaration was its model.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.db.models import Q
from rest_framework import serializers

from apps.core.errors import DomainError

QUESTION = "External code or AI assistants used?"
USED_HELP = (
    "Yes if any part came from code you did not write for this course (libraries aside) or from "
    "an AI assistant (ChatGPT, Copilot, Claude …)."
)
DESCRIPTION_HELP = "Which ones and for what, e.g. “Copilot for plotting code; FlashAttention repo”."
MAX_DESCRIPTION = 2000


class Declared(models.Model):
    """Adds `ai_used` (None until declared) and `ai_description` to a submission's model."""

    ai_used = models.BooleanField(null=True, blank=True, verbose_name=QUESTION, help_text=USED_HELP)
    ai_description = models.TextField(
        blank=True, verbose_name="What was used", help_text=DESCRIPTION_HELP
    )

    class Meta:
        abstract = True

    @property
    def declaration(self) -> str:
        """One line for boards: "none", "yes: …" or "not declared"."""
        if self.ai_used is None:
            return "not declared"
        return f"yes: {self.ai_description}" if self.ai_used else "none"


def described_when_used(name: str) -> models.CheckConstraint:
    """The database rule: a "yes" carries a description. (Not declared stays allowed, so rows
    made before the question existed migrate; services require the answer on submission.)"""
    rule = Q(ai_used__isnull=True) | Q(ai_used=False) | (Q(ai_used=True) & ~Q(ai_description=""))
    return models.CheckConstraint(condition=rule, name=name)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    if text in {"yes", "true", "1", "on"}:
        return True
    if text in {"no", "false", "0", "off"}:
        return False
    return None


def check(used: Any, description: str | None) -> tuple[bool, str]:
    """The declaration a service stores, or a DomainError naming the field: the question must be
    answered, and a "yes" needs a description."""
    answer = _as_bool(used)
    text = (description or "").strip()
    if answer is None:
        raise DomainError(f"Answer “{QUESTION}” (yes or no).", field="ai_used")
    if answer and not text:
        raise DomainError(
            "You answered yes: say which external code or AI assistants you used, and for what.",
            field="ai_description",
        )
    if len(text) > MAX_DESCRIPTION:
        raise DomainError(
            f"Keep the description under {MAX_DESCRIPTION} characters.", field="ai_description"
        )
    return answer, text if answer else ""


def apply(obj: Declared, used: Any, description: str | None) -> None:
    obj.ai_used, obj.ai_description = check(used, description)


class DeclarationFormMixin(forms.Form):
    """The two questions on a page's form; `clean` applies `check` so the error sits under the
    field it names."""

    ai_used = forms.TypedChoiceField(
        label=QUESTION,
        choices=[("no", "No"), ("yes", "Yes")],
        coerce=lambda v: v == "yes",
        widget=forms.RadioSelect,
        help_text=USED_HELP,
    )
    ai_description = forms.CharField(
        required=False,
        max_length=MAX_DESCRIPTION,
        label="What was used",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=DESCRIPTION_HELP + " Required when you answer yes.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "ai_used" in data:
            try:
                check(data["ai_used"], data.get("ai_description"))
            except DomainError as exc:
                self.add_error(exc.field, exc.message)
        return data


class DeclarationSerializerMixin(serializers.Serializer):
    ai_used = serializers.BooleanField(help_text=QUESTION)
    ai_description = serializers.CharField(
        required=False, allow_blank=True, max_length=MAX_DESCRIPTION, help_text=DESCRIPTION_HELP
    )


EXPORT_HEADER = ["external_code_or_ai", "external_code_or_ai_description"]


def export_cells(obj: Declared) -> list[str]:
    used = {None: "", True: "yes", False: "no"}[obj.ai_used]
    return [used, obj.ai_description]
