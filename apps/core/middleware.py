"""Every response under /api/ is JSON with the API's error shape, and a lost database or broker
is a 503 that says so rather than a 500.

DRF already answers its own views' errors as `{"detail", "code"}`; what it never sees are the
URLs that match no route, methods Django refuses before a view runs, and exceptions raised
outside a view's handler. This middleware converts those, so a client can always parse the body.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)
READ_ONLY_TRANSACTION = "25006"

API_PREFIX = "/api/"

_DEFAULT_DETAIL = {
    400: ("Bad request.", "invalid"),
    403: ("Not allowed.", "permission_denied"),
    404: (
        "No such API endpoint or object. See /api/docs/ for the operations there are.",
        "not_found",
    ),
    405: ("This method is not allowed here.", "method_not_allowed"),
    500: ("Something went wrong on the server; nothing was changed. Try again.", "server_error"),
}

UNAVAILABLE = (
    "The service is briefly unavailable (its database or task queue did not answer); "
    "nothing was changed. Try again in a minute."
)


def _is_connection_error(exc: BaseException) -> bool:
    """A lost database connection or an unreachable broker, as opposed to a bug."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    # A write on a connection to a server that is (now) a read-only standby: a failover under
    # way, not a bug (SQLSTATE 25006, which psycopg files under InternalError).
    if getattr(exc.__cause__, "sqlstate", None) == READ_ONLY_TRANSACTION:
        return True
    if isinstance(exc, DatabaseError) and "connection" in str(exc).lower():
        return True
    try:  # kombu is Celery's transport; its OperationalError means "broker unreachable"
        from kombu.exceptions import OperationalError as BrokerError
    except ImportError:  # pragma: no cover - kombu ships with celery
        return False
    return isinstance(exc, BrokerError)


class ApiJsonErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or request.path.startswith("/api/docs/"):
            return response
        content_type = response.get("Content-Type", "")
        if response.status_code >= 400 and "json" not in content_type:
            detail, code = _DEFAULT_DETAIL.get(
                response.status_code, ("The request could not be served.", "error")
            )
            converted = JsonResponse({"detail": detail, "code": code}, status=response.status_code)
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if header in response:
                    converted[header] = response[header]
            return converted
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not _is_connection_error(exc):
            return None
        log.warning("answering 503: %s: %s", type(exc).__name__, exc)
        if request.path.startswith(API_PREFIX):
            response: HttpResponse = JsonResponse(
                {"detail": UNAVAILABLE, "code": "unavailable"}, status=503
            )
        else:
            response = HttpResponse(
                render_to_string("503.html", {"message": UNAVAILABLE}), status=503
            )
        response["Retry-After"] = "30"
        return response
