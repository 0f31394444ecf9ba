"""Text input never carries NUL or other control characters: a query filter, a form field or a
JSON string that holds one is refused with a 400 naming the field, before any view runs.

PostgreSQL cannot store NUL in text (a 500 where the filter reached a query), and the other
control characters (besides tab and the newlines) are never typed by a person: they come from a
binary pasted into a box or a fuzzer. Uploaded files are not text fields: their bytes go to the
CSV reader (`apps.core.csvfile`), which has rules of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape

BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            key = str(k)
            yield path + "." + key if path else key, key
            yield from _strings(v, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def first_bad_field(request: HttpRequest) -> str | None:
    """The name of the first field whose text holds a control character, or None."""
    for name, values in request.GET.lists():
        if BAD.search(name) or any(BAD.search(v) for v in values):
            return name
    if request.method in ("POST", "PUT", "PATCH", "DELETE"):
        content_type = request.content_type or ""
        if content_type == "application/json":
            try:
                body = json.loads(request.body or b"null")
            except (ValueError, UnicodeDecodeError):
                return None  # not JSON: the view's parser says so
            for path, text in _strings(body, ""):
                if BAD.search(text):
                    return path or "body"
        elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            for name, values in request.POST.lists():
                if BAD.search(name) or any(BAD.search(v) for v in values):
                    return name
    return None


class ControlCharactersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        field = first_bad_field(request)
        if field is None:
            return self.get_response(request)
        shown = BAD.sub("�", field)
        detail = (
            f"{shown}: this text holds a control character (such as NUL), which no field "
            "accepts; remove it and try again."
        )
        if request.path.startswith("/api/"):
            body = {
                "detail": detail,
                "code": "invalid",
                "field": shown,
                "errors": {shown: [detail]},
            }
            return JsonResponse(body, status=400)  # both of the API's 400 shapes at once
        return HttpResponse(
            f"<!doctype html><title>Bad request</title><h1>Bad request</h1><p>{escape(detail)}</p>",
            status=400,
        )
