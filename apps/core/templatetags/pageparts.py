"""Small helpers for the page frame (base.html)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django import template
from django.contrib.messages import constants
from django.forms import BaseForm, BaseFormSet, BoundField
from django.utils.functional import LazyObject

register = template.Library()


@register.filter
def has_error(messages: Iterable[object]) -> bool:
    """Whether any of the request's messages is an error: the list is then the page's error
    summary (role=alert, focused on load)."""
    return any(getattr(m, "level", 0) >= constants.ERROR for m in messages)


@register.filter
def field_anchor(message: object) -> str:
    """The id of the input an error message is about ("field-<id>" among its tags), so the
    error summary links to it; "" for a message about no one field."""
    for tag in str(getattr(message, "extra_tags", "") or "").split():
        if tag.startswith("field-"):
            return tag.removeprefix("field-")
    return ""


@dataclass(frozen=True)
class _Problem:
    text: str
    anchor: str = ""  # the id of the field it is about, so the summary links to it


def _refused_forms(context: template.Context) -> list[BaseForm]:
    """The bound forms on the page that came back with errors (a formset's too), each once."""
    forms: dict[int, BaseForm] = {}
    for value in context.flatten().values():
        if isinstance(value, LazyObject):  # never evaluated here: the CSRF token sets a cookie
            continue
        candidates = value.forms if isinstance(value, BaseFormSet) else [value]
        for form in candidates:
            if isinstance(form, BaseForm) and form.is_bound and form.errors:
                forms.setdefault(id(form), form)
    return list(forms.values())


def _first_input(bound: BoundField) -> str:
    """The id the summary links to: the field's input, or a group's first choice (Django labels
    a radio or checkbox group by a fieldset, so its id_for_label is empty)."""
    return bound.id_for_label or (f"{bound.auto_id}_0" if bound.auto_id else "")


@register.inclusion_tag("core/_messages.html", takes_context=True)
def page_messages(context: template.Context) -> dict[str, object]:
    """The page's messages and, when a submission was refused, its error summary (WCAG 3.3.1):
    one list, focused on load (courseops.js), with every refused field of every bound form in
    the context linked to its input and every error message, above the page's content. A view
    therefore only has to hand its bound form back; no template writes its own summary."""
    problems: list[_Problem] = []
    notes: list[object] = []
    for message in context.get("messages") or []:
        if getattr(message, "level", 0) >= constants.ERROR:
            problems.append(_Problem(str(message), field_anchor(message)))
        else:
            notes.append(message)
    for form in _refused_forms(context):
        problems += [_Problem(str(e)) for e in form.non_field_errors()]
        for bound in form:
            if bound.errors:
                label = "" if bound.is_hidden else f"{bound.label}: "
                anchor = "" if bound.is_hidden else _first_input(bound)
                problems += [_Problem(f"{label}{e}", anchor) for e in bound.errors]
    return {"problems": problems, "notes": notes}
