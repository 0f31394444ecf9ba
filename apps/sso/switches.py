"""Which doors this deployment opens: the campus OpenID sign-on (configured or not) and
passwords (`PASSWORD_LOGIN`), and the page every password door shows when passwords are off."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def oidc_enabled() -> bool:
    return bool(getattr(settings, "OIDC_RP_CLIENT_ID", ""))


def password_login() -> bool:
    return bool(getattr(settings, "PASSWORD_LOGIN", True))


def closed(request: HttpRequest) -> HttpResponse:
    """The page every password door shows when password log-in is off (403)."""
    return render(request, "sso/password_off.html", {"oidc_enabled": oidc_enabled()}, status=403)
