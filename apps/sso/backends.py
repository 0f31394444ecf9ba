"""Campus sign-on through OpenID Connect (mozilla-django-oidc does the protocol: the code flow
with PKCE and a nonce, the ID token's signature against the provider's JWKS, the userinfo call).

What courseops adds is who may come in: an identity is the ID token's issuer + subject, linked
once to an account (`apps.sso.identity`). The first link by e-mail needs the provider to vouch
for it (the claim named by `OIDC_EMAIL_CLAIM`, with `email_verified` true) and an active
membership of some course, and never takes a staff or administrator account. Nobody else gets
an account: the refusal page says why and whom to ask. Every sign-on, link and refusal is an
audit row (the e-mail, never a token or a secret).
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from apps.core.models import User
from apps.sso.identity import identity_user
from apps.sso.refusals import REFUSAL, on_roster, refuse, signed_on

__all__ = ["REFUSAL", "CampusOIDCBackend", "on_roster", "refuse", "signed_on"]

log = logging.getLogger(__name__)


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
            issuer, subject = getattr(self, "_identity", ("", ""))
            signed_on(user, provider="oidc", issuer=issuer, subject=subject)
        return user

    def _email(self, claims: dict[str, Any]) -> str:
        return str(claims.get(getattr(settings, "OIDC_EMAIL_CLAIM", "email")) or "").strip()

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        email = self._email(claims)
        issuer, subject = getattr(self, "_identity", ("", ""))
        if not email:
            refuse(
                self.request,
                email="",
                why="Your campus account did not share an e-mail address with courseops.",
                provider="oidc",
                issuer=issuer,
                subject=subject,
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
                issuer=issuer,
                subject=subject,
            )
            return False
        return True

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        # The verified ID token names the identity; the userinfo must be about the same subject.
        self._identity = (str(payload.get("iss") or ""), str(payload.get("sub") or ""))
        return super().get_or_create_user(access_token, id_token, payload)

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        issuer, subject = getattr(self, "_identity", ("", ""))
        if claims.get("sub") not in (None, subject):
            subject = ""  # the userinfo speaks of someone else: refused below
        user = identity_user(
            self.request,
            provider="oidc",
            issuer=issuer,
            subject=subject,
            email=self._email(claims),
        )
        return User.objects.filter(pk=user.pk) if user is not None else User.objects.none()

    def create_user(self, claims: dict[str, Any]) -> None:
        return None  # never: people come from rosters (OIDC_CREATE_USER is off as well)
