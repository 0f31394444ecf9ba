"""One error shape for every endpoint: {"detail": message, "code": code, "field"?: name}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.errors import DomainError


class ErrorSerializer(serializers.Serializer):
    """Schema of every error response under /api/ (400, 401, 403, 404, 405, 409, 429, 503)."""

    detail = serializers.CharField(help_text="What went wrong, in words a user can act on.")
    code = serializers.CharField(help_text="Machine-readable reason, e.g. not_allowed, conflict.")
    field = serializers.CharField(required=False, help_text="The input field at fault, if one.")


def _flatten(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation errors as {"field.sub": [messages]}."""
    out: dict[str, list[str]] = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif (
        isinstance(errors, list) and errors and all(not isinstance(e, (dict, list)) for e in errors)
    ):
        out[prefix or "non_field_errors"] = [str(e) for e in errors]
    elif isinstance(errors, list):
        for i, value in enumerate(errors):
            out.update(_flatten(value, f"{prefix}[{i}]"))
    else:
        out[prefix or "non_field_errors"] = [str(errors)]
    return out


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        body = {"detail": exc.message, "code": exc.code}
        if exc.field:
            body["field"] = exc.field
        refused = Response(body, status=exc.status_code)
        retry_after = getattr(exc, "retry_after", None)  # a door's limit (apps.core.doors)
        if retry_after is not None:
            refused["Retry-After"] = str(retry_after)
        return refused
    if isinstance(exc, DjangoValidationError):
        return Response({"detail": "; ".join(exc.messages), "code": "invalid"}, status=400)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        errors = _flatten(response.data)
        first_field, messages = next(iter(errors.items()))
        where = "" if first_field == "non_field_errors" else f"{first_field}: "
        shaped: dict[str, Any] = {
            "detail": f"{where}{messages[0]}",
            "code": "invalid",
            "errors": errors,
        }
        if first_field != "non_field_errors":
            shaped["field"] = first_field
        response.data = shaped
    elif isinstance(response.data, dict) and "detail" in response.data:
        detail = response.data["detail"]
        response.data["code"] = getattr(detail, "code", "error")
    return response
