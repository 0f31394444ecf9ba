"""One error shape for every endpoint: {"detail": message, "code": code, "field"?: name}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.errors import DomainError


class ErrorSerializer(serializers.Serializer):
    """Schema of an error response (400, 401, 403, 404, 409)."""

    detail = serializers.CharField(help_text="What went wrong, in words a user can act on.")
    code = serializers.CharField(help_text="Machine-readable reason, e.g. not_allowed, conflict.")
    field = serializers.CharField(required=False, help_text="The input field at fault, if one.")


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        body = {"detail": exc.message, "code": exc.code}
        if exc.field:
            body["field"] = exc.field
        return Response(body, status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        return Response({"detail": "; ".join(exc.messages), "code": "invalid"}, status=400)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" in response.data:
        detail = response.data["detail"]
        response.data["code"] = getattr(detail, "code", "error")
    return response
