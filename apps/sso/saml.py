"""Campus sign-on through SAML 2.0 (djangosaml2 over pysaml2: the AuthnRequest, the signed
response checked against the IdP's metadata, the attribute maps). courseops adds the same rule as
for OpenID Connect: the e-mail attribute (`SAML_EMAIL_ATTRIBUTE`, `mail` by default) must match
an active roster entry; nobody gets an account from the IdP."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from djangosaml2.backends import Saml2Backend
from djangosaml2.views import AssertionConsumerServiceView, LoginView, MetadataView
from saml2.saml import NAMEID_FORMAT_PERSISTENT

from apps.core.models import User
from apps.sso.identity import identity_user
from apps.sso.refusals import (
    address_shut,
    limited_answer,
    limited_response,
    refuse,
    signed_on,
)


def saml_enabled() -> bool:
    return bool(getattr(settings, "SAML_CONFIG", None))


def xmlsec_missing() -> str:
    """The xmlsec1 program pysaml2 signs and verifies with, when SAML is configured and it is
    not there ("" when all is well): every SAML page then says so, never a 500."""
    if not saml_enabled():
        return ""
    binary = str(settings.SAML_CONFIG.get("xmlsec_binary") or "/usr/bin/xmlsec1")
    if os.path.isfile(binary) and os.access(binary, os.X_OK):
        return ""
    return binary


def _unavailable(request: HttpRequest, binary: str) -> HttpResponse:
    return render(
        request,
        "sso/saml_unavailable.html",
        {"binary": binary, "contact": getattr(settings, "SSO_HELP_CONTACT", "")},
        status=503,
    )


def _closed(request: HttpRequest) -> HttpResponse | None:
    """404 where SAML is not configured, 503 naming xmlsec1 where it is missing, else None."""
    if not saml_enabled():
        raise Http404("SAML sign-on is not configured on this server.")
    missing = xmlsec_missing()
    return _unavailable(request, missing) if missing else None


def _subject(session_info: dict[str, Any]) -> str:
    """The person's stable id at the IdP: a persistent NameID, else the first of the attributes
    `SAML_SUBJECT_ATTRIBUTES` names (eduPersonPrincipalName, uid). A transient NameID changes at
    every sign-on, so it never names anyone; with no stable id the sign-on is refused."""
    name_id = session_info.get("name_id")
    text = getattr(name_id, "text", "")
    if getattr(name_id, "format", "") == NAMEID_FORMAT_PERSISTENT and text:
        return str(text)
    ava = session_info.get("ava") or {}
    for name in getattr(settings, "SAML_SUBJECT_ATTRIBUTES", ("eduPersonPrincipalName", "uid")):
        values = ava.get(name) or []
        if values and str(values[0]).strip():
            return str(values[0]).strip()
    return ""


class CampusSaml2Backend(Saml2Backend):
    def authenticate(self, request: Any, session_info: Any = None, **kwargs: Any) -> Any:
        if not saml_enabled() or session_info is None:
            return None
        self._request = request
        self._subject = _subject(session_info)
        self._issuer = str(session_info.get("issuer") or "")
        user = super().authenticate(request, session_info=session_info, **kwargs)
        if user is not None:
            signed_on(user, provider="saml", issuer=self._issuer, subject=self._subject)
        return user

    def _email(self, attributes: dict[str, Any]) -> str:
        values = attributes.get(getattr(settings, "SAML_EMAIL_ATTRIBUTE", "mail")) or [""]
        return str(values[0]).strip()

    def is_authorized(self, attributes: dict[str, Any], *args: Any, **kwargs: Any) -> bool:
        if not self._email(attributes):
            refuse(
                getattr(self, "_request", None),
                email="",
                why="Your campus account did not share an e-mail address with courseops.",
                provider="saml",
                issuer=getattr(self, "_issuer", ""),
                subject=getattr(self, "_subject", ""),
            )
            return False
        return True

    def get_or_create_user(
        self,
        user_lookup_key: str,
        user_lookup_value: Any,
        create_unknown_user: bool,
        idp_entityid: str,
        attributes: dict[str, Any],
        attribute_mapping: dict[str, Any],
        request: Any,
    ) -> tuple[User | None, bool]:
        user = identity_user(
            request,
            provider="saml",
            issuer=str(idp_entityid or ""),
            subject=getattr(self, "_subject", ""),
            email=self._email(attributes),
        )
        return user, False

    def _update_user(self, user: Any, *args: Any, **kwargs: Any) -> Any:
        return user  # the roster owns names and addresses, not the IdP


class SamlStart(LoginView):
    """Sends the browser to the campus IdP (404 where SAML is not configured)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _closed(request) or super().get(request, *args, **kwargs)


class SamlAcs(AssertionConsumerServiceView):
    """The IdP's assertion: refused with 429 before it is read when this address is past its
    refusal limit; a refusal past a door's limit answers 429 too (`apps.sso.refusals`)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        closed = _closed(request)
        if closed is not None:
            return closed
        until = address_shut(request)
        if until is not None:
            return limited_response(request, until)
        response = super().post(request, *args, **kwargs)
        return limited_answer(request) or response


class SamlMetadata(MetadataView):
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _closed(request) or super().get(request, *args, **kwargs)


def acs_failure(request: HttpRequest, exception: Any = None, status: int = 403, **kw: Any) -> Any:
    """A refused or broken SAML response: the refusal page (its reason is in the session when
    the roster refused; otherwise a general one), never a 500."""
    if hasattr(request, "session") and "sso_refused" not in request.session:
        refuse(
            request,
            email="",
            why="The campus sign-on could not be completed (the IdP's answer did not verify). "
            "Try again; if it keeps happening, tell the course staff.",
            provider="saml",
        )
    return redirect("sso-refused")
