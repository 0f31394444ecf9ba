"""Small helpers shared by course-scoped pages."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect, QueryDict
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_instructor, is_staff
from apps.core.selectors import course_get


def course_for(request: AuthedRequest, code: str, *, staff: bool = False) -> Course:
    """The course (404 for non-members), set on the request for navigation; 403 for non-staff
    on staff pages."""
    course = course_get(user=request.user, code=code)
    request.course = course
    if staff and not is_staff(request.user, course):
        raise PermissionDenied("Only the course's instructors and TAs can open this page.")
    return course


def int_or_none(value: str | None) -> int | None:
    """A whole number typed in a form or query string, or None when empty or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def typed_int(value: str | None, what: str, *, field: str = "") -> int | None:
    """A whole number typed in a form, or None when left empty; something else typed is a
    DomainError naming `what`, since reading it as empty would drop what the person meant."""
    typed = (value or "").strip()
    number = int_or_none(typed)
    if typed and number is None:
        raise DomainError(f"{what}: “{typed[:20]}” is not a whole number.", field=field)
    return number


def course_action(
    *, staff: bool = False, student: bool = False, instructor: bool = False
) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """One view per action: a POST-only page action of a course, for its members (404 for
    others); with `staff=True` for its instructors and TAs only, `instructor=True` for its
    instructors only, `student=True` for its students only (403 for the others).

    The wrapped function takes `(request, course, **url_kwargs)` and returns its redirect; a GET
    answers 405, an anonymous visitor goes to the log-in page first.
    """

    def wrap(fn: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @functools.wraps(fn)
        def view(request: AuthedRequest, code: str, **kwargs: Any) -> HttpResponseBase:
            course = course_for(request, code, staff=staff or instructor)
            if student and is_staff(request.user, course):
                raise PermissionDenied("Only students of the course can do this.")
            if instructor and not is_instructor(request.user, course):
                raise PermissionDenied("Only the course's instructors can do this.")
            return fn(request, course, **kwargs)

        return login_required(require_POST(view))

    return wrap


@contextlib.contextmanager
def errors_as_messages(
    request: HttpRequest, *, form: str = "", field_ids: dict[str, str] | None = None
) -> Iterator[None]:
    """Inside an action view: a refused change (a DomainError) becomes the page's error message,
    so the view still answers with its redirect and the user reads why.

    With `form`, the refusal is also tied to its field across the redirect: what was typed and
    the message are kept for the page (`form_kept`), which marks the field aria-invalid and
    describes it by the message; with `field_ids` ({field: the input's id}) the error summary
    links to that input."""
    try:
        yield
    except DomainError as exc:
        # The tag keeps the refusal's kind (not_allowed, not_found, conflict, invalid) beside
        # the text, for styling and for tests that tell a permission from a rule.
        tags = f"refused-{exc.code}"
        if exc.field and field_ids and exc.field in field_ids:
            tags += f" field-{field_ids[exc.field]}"
        messages.error(request, exc.message, extra_tags=tags)
        if form:
            # A refusal that must not show the text back (a pasted private key) says so.
            hidden = {exc.field} if exc.field and not getattr(exc, "echo", True) else set()
            request.session[f"form:{form}"] = {
                "data": {
                    k: v
                    for k, v in request.POST.items()
                    if k != "csrfmiddlewaretoken" and k not in hidden
                },
                "field": exc.field or "",
                "message": exc.message,
            }


def form_kept(request: HttpRequest, form: str) -> dict[str, Any]:
    """What `errors_as_messages(form=…)` kept of a refused post, once: {"data", "field",
    "message"}; empty when the last post of that form was not refused."""
    kept: dict[str, Any] = request.session.pop(f"form:{form}", None) or {}
    return kept


def redirect_with_back_query(request: HttpRequest, url: str) -> HttpResponseRedirect:
    """Back to a list page with the filters it was showing: the form carries them in a hidden
    `back` field (its query string), re-encoded here so nothing but a query string gets through."""
    query = QueryDict(request.POST.get("back", "")).urlencode()
    return HttpResponseRedirect(f"{url}?{query}" if query else url)
