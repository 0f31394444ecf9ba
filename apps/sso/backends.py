"""Campus sign-on through OpenID Connect (mozilla-django-oidc does the protocol: the code flow
with PKCE and a nonce, the ID token's signature against the provider's JWKS, the userinfo call).

What courseops adds is who may come in: the provider must vouch for the e-mail (the claim named
by `OIDC_EMAIL_CLAIM`, with `email_verified` true), and that e-mail must already be on a roster —
an active membership of some course (roster imports and the LMS create them) — or be a site
administrator. Nobody else gets an account: the refusal page says why and whom to ask. Every
sign-on and every refusal is an audit row (the e-mail, never a token or a secret).
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from apps.core.models import User
from apps.core.services import audit_record

log = logging.getLogger(__name__)
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


class CampusOIDCBackend(OIDCAuthenticationBackend):
    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        if not getattr(settings, "OIDC_RP_CLIENT_ID", ""):
            return None  # not configured: password log-in (or another backend) decides
        try:
            user = super().authenticate(request, **kwargs)
        except (requests.RequestException, jwt.PyJWTError, SuspiciousOperation, ValueError) as exc:
            # An unreachable provider, a token that does not verify, a nonce that does not
            # match: the person sees the refusal page, never a 500.
            log.warning("OpenID Connect sign-on failed: %s", type(exc).__name__)
            if request is not None and request.GET.get("code"):
                refuse(
                    request,
                    email="",
                    why="The campus sign-on could not be completed (the provider's answer did not "
                    "verify). Try again; if it keeps happening, tell the course staff.",
                    provider="oidc",
                )
            return None
        if user is not None:
            signed_on(user, provider="oidc")
        return user

    def _email(self, claims: dict[str, Any]) -> str:
        return str(claims.get(getattr(settings, "OIDC_EMAIL_CLAIM", "email")) or "").strip()

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        email = self._email(claims)
        if not email:
            refuse(
                self.request,
                email="",
                why="Your campus account did not share an e-mail address with courseops.",
                provider="oidc",
            )
            return False
        if claims.get("email_verified") is False or (
            getattr(settings, "OIDC_REQUIRE_EMAIL_VERIFIED", True)
            and claims.get("email_verified") is not True
        ):
            refuse(
                self.request,
                email=email,
                why="Your campus account's e-mail address is not verified.",
                provider="oidc",
            )
            return False
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        email = self._email(claims)
        found = User.objects.by_email(email).filter(is_active=True).filter(on_roster())
        found = found.distinct()
        if not found.exists():
            refuse(
                self.request,
                email=email,
                why="This e-mail address is on no course's roster in courseops.",
                provider="oidc",
            )
        return found

    def create_user(self, claims: dict[str, Any]) -> None:
        return None  # never: people come from rosters (OIDC_CREATE_USER is off as well)
