"""The refusal page's reason and the audit rows of every campus sign-on and refusal (the e-mail,
never a token or a secret)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest

from apps.core.models import User
from apps.core.services import audit_record

REFUSAL = "sso_refused"  # session key: why the last sign-on was refused, for the refusal page


def on_roster() -> Q:
    """People who may sign on: an active membership somewhere, or a site administrator."""
    return Q(memberships__is_active=True) | Q(is_superuser=True)


def refuse(request: HttpRequest | None, *, email: str, why: str, provider: str) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[REFUSAL] = {"email": email, "why": why, "provider": provider}
    with transaction.atomic():
        audit_record(
            actor=None,
            action="auth.sso_refused",
            after={"provider": provider, "email": email, "why": why},
        )


def signed_on(user: User, *, provider: str) -> None:
    with transaction.atomic():
        audit_record(
            actor=user, action="auth.sso_login", after={"provider": provider, "email": user.email}
        )
