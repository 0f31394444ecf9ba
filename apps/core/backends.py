"""Log-in backends: Django's ModelBackend and DRF's token authentication, with the user read that
every request makes (the session's user, the API token's) through `compiled_query`, its SQL built
once per process instead of per request. Passwords, permissions, inactive users and unknown
tokens are handled exactly as by the originals."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from apps.core.compiled import compiled_query
from apps.core.models import User


def _user_by_pk(pk: int) -> QuerySet[User]:
    return User.objects.filter(pk=pk)


class ModelBackend(DjangoModelBackend):
    def get_user(self, user_id: Any) -> User | None:
        try:
            pk = int(user_id)
        except (TypeError, ValueError):
            return None
        found = compiled_query("core.session_user", _user_by_pk, pk)
        user = found[0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None


def _token_with_user(key: str) -> QuerySet[Token]:
    return Token.objects.select_related("user").filter(key=key)


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication (`Authorization: Token …`), its token-and-user read compiled
    once per process like the session user's; the same 401s for an unknown or inactive token."""

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        found = compiled_query("core.api_token", _token_with_user, key)
        if not found:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = found[0]
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token
