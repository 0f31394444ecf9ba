"""Log-in backends: Django's ModelBackend and token authentication over named API tokens, with
the user read that every request makes (the session's user, the API token's) through
`compiled_query`, its SQL built once per process instead of per request. Passwords, permissions,
inactive users and unknown tokens are handled exactly as by the originals."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from apps.core.compiled import compiled_query
from apps.core.models import ApiToken, User
from apps.core.tokens import TOUCH_EVERY_S, digest


def _user_by_pk(pk: int) -> QuerySet[User]:
    return User.objects.filter(pk=pk)


class ModelBackend(DjangoModelBackend):
    def authenticate(
        self,
        request: Any,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        """A password proves nothing when the deployment turned password log-in off
        (`PASSWORD_LOGIN=off`): every door that checks one — the log-in page, the admin's,
        the token endpoint — finds no account by it. Sessions made by sign-on still work."""
        if not getattr(settings, "PASSWORD_LOGIN", True):
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id: Any) -> User | None:
        try:
            pk = int(user_id)
        except (TypeError, ValueError):
            return None
        found = compiled_query("core.session_user", _user_by_pk, pk)
        user = found[0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None


def _token_with_user(key_hash: str) -> QuerySet[ApiToken]:
    return ApiToken.objects.select_related("user").filter(
        key_hash=key_hash, revoked_at__isnull=True
    )


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` against the person's named tokens (apps.core.tokens): the
    key's SHA-256 is looked up (its read compiled once per process, like the session user's),
    a revoked or unknown key is a 401, and `last_used_at` is written at most once a minute."""

    def authenticate_credentials(self, key: str) -> tuple[User, ApiToken]:
        found = compiled_query("core.api_token", _token_with_user, digest(key))
        if not found:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = found[0]
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > TOUCH_EVERY_S:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token
