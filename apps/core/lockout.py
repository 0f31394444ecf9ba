"""Brute-force protection for every way to log in (django-axes), with courseops' policy.

The login form, the admin login and the API token endpoint all call `authenticate()`, so one
policy covers them: django-axes counts failures per account (the main defence) and per IP
address, and refuses a locked-out client before any password is checked. Two things are ours:

- **Two limits.** django-axes compares every lockout parameter with one limit. Students sit
  behind one campus NAT, so the per-IP limit must be far more generous than the per-account one:
  `CourseopsAxesHandler` scales the per-IP count into per-account units
  (`AXES_FAILURE_LIMIT` per account, `COURSEOPS_IP_FAILURE_LIMIT` per address).
- **A clear answer.** `lockout_response` says until when the lock holds, as JSON (429 with
  `Retry-After`) under `/api/` and as the login page elsewhere, and writes an audit event for
  every refused attempt.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db import transaction
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone

from apps.core.models import Course
from apps.core.services import audit_record
from apps.core.timefmt import format_clock, to_course_tz


def username_of(request: HttpRequest, credentials: dict[str, Any] | None) -> str:
    """The account a login attempt names: the email, trimmed and lower-cased, so that
    `Student01@…` and `student01@…` are one account for counting failures."""
    creds = {str(k): v for k, v in (credentials or {}).items()}
    # Django's authenticate() passes the log-in name as `username`; django-axes files it under
    # the user model's USERNAME_FIELD (`email`).
    raw: Any = creds.get("email") or creds.get("username")
    if raw is None and request is not None and hasattr(request, "POST"):
        raw = request.POST.get("username") or request.POST.get("email")
    if raw is None and request is not None:
        data = getattr(request, "data", None)
        if isinstance(data, dict):
            raw = data.get("email") or data.get("username")
    return str(raw or "").strip().lower()[:255]


def not_a_password_try(request: HttpRequest, credentials: dict[str, Any] | None) -> bool:
    """django-axes' whitelist: an `authenticate()` call with no password (a campus sign-on's
    callback or assertion) is neither counted nor refused by the password lock-out; its
    refusals have their own doors (`apps.core.doors`, per identity and per address)."""
    return (credentials or {}).get("password") in (None, "")


class CourseopsAxesHandler(AxesDatabaseHandler):
    """django-axes' database handler with a separate, generous limit per IP address.

    `get_failures` answers in per-account units: an account's own failures count one each; an
    address's failures count `AXES_FAILURE_LIMIT / COURSEOPS_IP_FAILURE_LIMIT` each. Either
    reaching `AXES_FAILURE_LIMIT` locks (the account, or the address)."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        per_parameter = [
            attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        ]
        # AXES_LOCKOUT_PARAMETERS is ["username", "ip_address"]: the same order here.
        by_account = per_parameter[0] if per_parameter else 0
        by_address = per_parameter[1] if len(per_parameter) > 1 else 0
        scale = settings.AXES_FAILURE_LIMIT / settings.COURSEOPS_IP_FAILURE_LIMIT
        return max(by_account, math.floor(by_address * scale))


def locked_until(request: HttpRequest, username: str) -> dt.datetime | None:
    """When the newest failure that keeps this account locked stops counting; the address's,
    when it is the address that is locked (other people's tries behind the same campus NAT
    must not stretch one student's lock)."""
    cool_off = get_cool_off(request) or dt.timedelta(0)
    ip = getattr(request, "axes_ip_address", None) or request.META.get("REMOTE_ADDR", "")
    since = timezone.now() - cool_off
    mine = AccessAttempt.objects.filter(username=username, attempt_time__gte=since).aggregate(
        n=Sum("failures_since_start"), last=Max("attempt_time")
    )
    if (mine["n"] or 0) >= settings.AXES_FAILURE_LIMIT:
        last = mine["last"]
    else:
        last = AccessAttempt.objects.filter(ip_address=ip).aggregate(last=Max("attempt_time"))[
            "last"
        ]
    return last + cool_off if last else None


def site_zone() -> str:
    """The zone a page that belongs to no course shows times in: the courses' zone when they
    all share one (a campus's usual case), else UTC. Never the zone of the account being
    tried, which would tell a stranger whether that account exists."""
    zones = list(Course.objects.order_by().values_list("timezone", flat=True).distinct()[:2])
    return zones[0] if len(zones) == 1 and zones[0] else "UTC"


def until_text(until: dt.datetime | None) -> str:
    if until is None:
        return "for a while"
    minutes = max(1, math.ceil((until - timezone.now()).total_seconds() / 60))
    zone = site_zone()
    clock = f"{format_clock(until, zone)} {to_course_tz(until, zone).tzname()}"
    return f"until {clock} (about {minutes} minute{'s' if minutes != 1 else ''})"


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """The answer to an attempt on a locked account or address: 429, the time the lock ends,
    and how to get help. Audited (one event per refused attempt)."""
    username = username_of(request, credentials)
    until = locked_until(request, username)
    message = (
        "Too many failed log-in attempts for this account or network. "
        f"Log-in is locked {until_text(until)}; course staff can unlock you sooner, "
        "or reset your password."
    )
    with transaction.atomic():
        audit_record(
            actor=None,
            action="auth.login_locked_out",
            after={
                "username": username,
                "ip": getattr(request, "axes_ip_address", ""),
                "path": request.path,
                "locked_until": until.isoformat() if until else None,
            },
        )
    retry_after = max(1, math.ceil((until - timezone.now()).total_seconds())) if until else 60
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {
                "detail": message,
                "code": "locked_out",
                "locked_until": until.isoformat() if until else None,
            },
            status=429,
        )
    else:
        form = AuthenticationForm(request, initial={"username": username})
        response = render(
            request,
            "registration/login.html",
            {"form": form, "locked_message": message, "locked_until": until},
            status=429,
        )
    response["Retry-After"] = str(retry_after)
    return response


def locked_accounts(*, course_member_emails: list[str] | None = None) -> dict[str, dt.datetime]:
    """Which of these emails (None: any account) are locked out of logging in right now, and
    until when. Only recent attempts are read, so asking for any account is cheap; a course page
    then keeps its own members among them (a list of every member's e-mail would read the whole
    user table once many courses share the database)."""
    cool_off = settings.AXES_COOLOFF_TIME
    since = timezone.now() - cool_off
    attempts = AccessAttempt.objects.filter(attempt_time__gte=since)
    if course_member_emails is not None:
        attempts = attempts.filter(username__in=[e.lower() for e in course_member_emails])
    failures: dict[str, int] = {}
    last: dict[str, dt.datetime] = {}
    for username, count, attempt_time in attempts.values_list(
        "username", "failures_since_start", "attempt_time"
    ):
        failures[username] = failures.get(username, 0) + count
        last[username] = max(last.get(username, attempt_time), attempt_time)
    return {u: last[u] + cool_off for u, n in failures.items() if n >= settings.AXES_FAILURE_LIMIT}
