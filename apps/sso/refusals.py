"""The refusal page's reason, the audit rows of every campus sign-on and refusal (the e-mail,
never a token or a secret), and the limits on refusals.

A refused sign-on counts on two doors (`apps.core.doors`): the campus identity (issuer +
subject; the asserted e-mail when the provider named nobody) and the address it came from —
never a shared empty name, so twenty strangers refused leave a rostered student's sign-on
untouched. Past the identity's limit that identity's refusals answer 429 until the window ends;
an identity the roster now admits is never stopped by its past refusals (a student added after
trying signs on at once). Past the address's limit the callback answers 429 before the provider
is asked (`address_shut`)."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.core import doors
from apps.core.emails import canonical_email
from apps.core.lockout import until_text
from apps.core.models import User
from apps.core.services import audit_record

REFUSAL = "sso_refused"  # session key: why the last sign-on was refused, for the refusal page
LIMITED = "signon_limited_until"  # request attribute: this refusal is past a door's limit


def on_roster() -> Q:
    """People who may sign on: an active membership somewhere, or a site administrator."""
    return Q(memberships__is_active=True) | Q(is_superuser=True)


def identity_key(*, provider: str, issuer: str = "", subject: str = "", email: str = "") -> str:
    """Whom a sign-on's refusals are counted against: the identity, else the asserted e-mail,
    else nobody ("", never counted: the address still is)."""
    if issuer and subject:
        return f"{provider}:{issuer} {subject}"
    if email.strip():
        return f"{provider}:email:{canonical_email(email)}"
    return ""


def refuse(
    request: HttpRequest | None,
    *,
    email: str,
    why: str,
    provider: str,
    issuer: str = "",
    subject: str = "",
) -> None:
    """Record a refusal: counted per identity and per address, audited, and its reason kept for
    the refusal page; past a door's limit the request is marked to answer 429."""
    who = identity_key(provider=provider, issuer=issuer, subject=subject, email=email)
    address = doors.client_address(request)
    by_identity = doors.knock(doors.SIGNON_IDENTITY, who)
    by_address = doors.knock(doors.SIGNON_ADDRESS, address)
    over = [
        knock.until
        for knock, door in (
            (by_identity, doors.SIGNON_IDENTITY),
            (by_address, doors.SIGNON_ADDRESS),
        )
        if knock.over(door)
    ]
    until = max(over) if over else None
    if until is not None:
        why = (
            "Too many refused sign-ons from this campus account or network: try again "
            f"{until_text(until)}. {why}"
        )
        if request is not None:
            setattr(request, LIMITED, until)
    if request is not None and hasattr(request, "session"):
        request.session[REFUSAL] = {"email": email, "why": why, "provider": provider}
    with transaction.atomic():
        audit_record(
            actor=None,
            action="auth.sso_refused",
            after={
                "provider": provider,
                "email": email,
                "why": why,
                "ip": address,
                "tries": by_identity.count,
                "limited": until is not None,
            },
        )


def address_shut(request: HttpRequest) -> dt.datetime | None:
    """When this address may try a campus sign-on again, if it is over its refusal limit."""
    return doors.shut_until(doors.SIGNON_ADDRESS, doors.client_address(request))


def limited_response(request: HttpRequest, until: dt.datetime, why: str = "") -> HttpResponse:
    """429: the refusal page with how long the limit holds, and Retry-After."""
    text = why or (
        "Too many refused sign-ons from this network: campus sign-on from here is paused "
        f"{until_text(until)}. If you should be on a course's roster, ask its staff."
    )
    from django.conf import settings

    response = render(
        request,
        "sso/refused.html",
        {
            "why": {"why": text, "email": ""},
            "contact": getattr(settings, "SSO_HELP_CONTACT", ""),
        },
        status=429,
    )
    response["Retry-After"] = str(doors.TooManyTries("", until=until).retry_after)
    return response


def limited_answer(request: HttpRequest) -> HttpResponse | None:
    """The 429 for a refusal past a door's limit (marked by `refuse`), else None."""
    until = getattr(request, LIMITED, None)
    if until is None:
        return None
    why = ""
    if hasattr(request, "session"):
        why = (request.session.pop(REFUSAL, None) or {}).get("why", "")
    return limited_response(request, until, why)


def signed_on(user: User, *, provider: str, issuer: str = "", subject: str = "") -> None:
    """A sign-on that got in: audited; the identity's refusals are forgotten."""
    doors.clear(
        doors.SIGNON_IDENTITY, identity_key(provider=provider, issuer=issuer, subject=subject)
    )
    doors.clear(doors.SIGNON_IDENTITY, identity_key(provider=provider, email=user.email))
    with transaction.atomic():
        audit_record(
            actor=user, action="auth.sso_login", after={"provider": provider, "email": user.email}
        )
