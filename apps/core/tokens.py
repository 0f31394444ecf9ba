"""API tokens, several per person: each named for its client, revocable alone (apps.core.models.
ApiToken). A key is 40 random hex characters shown once; only its SHA-256 is kept, so a copy of
the database lets nobody in. Logging in through the API makes a new token for that client, and
logging out revokes only the token the call came with."""

from __future__ import annotations

import hashlib
import secrets

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.core.errors import NotFound
from apps.core.models import ApiToken, User
from apps.core.services import audit_record

TOUCH_EVERY_S = 60  # `last_used_at` is written at most once a minute per token
MAX_LIVE = 50  # a person's live tokens; the oldest unused goes when a 51st is made


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token and its key (the only time the key is seen)."""
    key = secrets.token_hex(20)
    with transaction.atomic():
        # One person's creations queue on their user row, so the cap below counts every live
        # token another request made a moment ago (60 at once leave 50 live, not 51).
        User.objects.select_for_update().filter(pk=user.pk).first()
        token = ApiToken.objects.create(
            user=user,
            name=(name.strip() or "API client")[:100],
            key_hash=digest(key),
            prefix=key[:8],
        )
        live = ApiToken.objects.filter(user=user, revoked_at__isnull=True)
        recent = Coalesce("last_used_at", "created_at")  # last used, or made, most recently first
        extra = list(live.order_by(recent.desc()).values_list("pk", flat=True))
        if len(extra) > MAX_LIVE:
            live.filter(pk__in=extra[MAX_LIVE:]).update(revoked_at=timezone.now())
        audit_record(actor=user, action="api_token.created", obj=token, after={"name": token.name})
    return token, key


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of the person's own tokens; the others keep working. Locks the token row, so
    two revokes of one token write one audit row; the audit row commits with the revoke."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(user=user, pk=token_id).first()
        if token is None:
            raise NotFound("You have no such token.")
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            audit_record(
                actor=user, action="api_token.revoked", obj=token, after={"name": token.name}
            )
    return token


def tokens_of(user: User) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")[:200])
