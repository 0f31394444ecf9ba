"""Sign-on pages: the start of the OpenID Connect flow (404 when it is not configured) and the
page that says why a sign-on was refused and whom to ask."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from apps.core.http import AuthedRequest
from apps.sso.backends import REFUSAL
from apps.sso.identity import LINK_INTENT
from apps.sso.models import SsoIdentity
from apps.sso.refusals import address_shut, limited_answer, limited_response
from apps.sso.switches import closed, oidc_enabled, password_login


def admin_login(request: HttpRequest) -> HttpResponseBase:
    """The admin's log-in page, a password door like the others: with `PASSWORD_LOGIN=off` it
    takes no password, and administrators reach `/admin/` with their campus sign-on session."""
    if password_login():
        return admin.site.login(request)
    if request.user.is_authenticated and request.user.is_active and request.user.is_staff:
        return redirect(reverse("admin:index"))
    return closed(request)


class OIDCStart(OIDCAuthenticationRequestView):
    """Sends the browser to the campus OpenID provider (with state, nonce and PKCE)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_enabled():
            raise Http404("Campus sign-on is not configured on this server.")
        return super().get(request)


class OIDCCallback(OIDCAuthenticationCallbackView):
    """The provider's answer: refused with 429 before the provider is asked for the token when
    this address is past its refusal limit; a refusal past a door's limit answers 429 too
    (`apps.sso.refusals`). Everything else is mozilla-django-oidc's."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if request.GET.get("code"):
            until = address_shut(request)
            if until is not None:
                return limited_response(request, until)
        response: HttpResponse = super().get(request)
        return limited_answer(request) or response


class LoginView(auth_views.LoginView):
    """Django's log-in page, offering the campus sign-on when configured; a deployment can turn
    the password form off (`PASSWORD_LOGIN=off`), and then a posted password is refused."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        from apps.sso.saml import saml_enabled

        return super().get_context_data(**kwargs) | {
            "oidc_enabled": oidc_enabled(),
            "saml_enabled": saml_enabled(),
            "saml_label": getattr(
                settings, "SAML_BUTTON_LABEL", "Log in with campus SAML (Shibboleth)"
            ),
            "oidc_label": getattr(settings, "OIDC_BUTTON_LABEL", "Log in with your campus account"),
            "password_login": password_login(),
        }

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not password_login():
            return closed(request)
        return super().post(request, *args, **kwargs)


@require_GET
def refused(request: HttpRequest) -> HttpResponse:
    """Why the last sign-on was refused (from the session), and whom to ask."""
    why = request.session.pop(REFUSAL, None) if hasattr(request, "session") else None
    return render(
        request,
        "sso/refused.html",
        {
            "why": why,
            "contact": getattr(settings, "SSO_HELP_CONTACT", ""),
            "password_login": password_login(),
        },
    )


@login_required
@require_GET
def linked_accounts(request: AuthedRequest) -> HttpResponse:
    """Your campus accounts: the identities linked to you, and the button that links one while
    you are signed in (the only way for staff and administrators, whom an e-mail never signs
    in by itself)."""
    return render(
        request,
        "sso/account.html",
        {
            "identities": SsoIdentity.objects.filter(user=request.user).order_by("linked_at"),
            "oidc_enabled": oidc_enabled(),
            "oidc_label": getattr(settings, "OIDC_BUTTON_LABEL", "campus account"),
        },
    )


@login_required
@require_POST
def link_start(request: AuthedRequest) -> HttpResponseBase:
    """ "Link my campus account": remembers who asked, then starts the campus sign-on; the
    callback links the identity to this account (`apps.sso.identity`)."""
    if not oidc_enabled():
        messages.error(
            request, "This site has no OpenID Connect sign-on to link; ask its administrator."
        )
        return redirect("sso-account")
    request.session[LINK_INTENT] = request.user.pk
    return redirect(f"{reverse('oidc_authentication_init')}?next={reverse('sso-account')}")
