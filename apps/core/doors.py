"""Every door a stranger can knock on, and its limit, in one place with the log-in lock-out.

A door is something anyone can try again and again: a password, a campus sign-on that the
roster refuses, a lecture's check-in code, a password-reset e-mail. Each counts the tries of one
key (the account, the identity, the person in one lecture, the address) in a window and, past
its limit, answers 429 (or, for password reset, the same page while sending nothing). A key is
never shared by strangers: nothing is ever counted under an empty name, so one person's tries
never lock out anybody else, except through the deliberately generous per-address limits (a
lecture hall shares one campus NAT).

The numbers are settings (`DOOR_LIMITS`, from the environment; docs/operators.md, "Limits on
every door"); a start-up check refuses a door the code knocks on that has none.

- password log-in (django-axes, `apps.core.lockout`): per account `AXES_FAILURE_LIMIT` (5) and
  per address `COURSEOPS_IP_FAILURE_LIMIT` (100) failures in `AXES_COOLOFF_MINUTES` (15): 429.
- `signon-identity`: OIDC/SAML refusals per campus identity (issuer + subject, else the asserted
  e-mail), 5 in 15 minutes: 429 until the window ends.
- `signon-address`: OIDC/SAML refusals per address, 100 in 15 minutes: 429, before the provider
  is asked anything.
- `checkin-code`: wrong check-in codes per student per lecture, 5: 429 (staff see the tries).
- `reset-address`: password-reset e-mails per address asked for, 3 an hour; `reset-client`:
  reset requests per asking address, 20 an hour. Past either: the same page, nothing sent.

Doors with no limit, and why none is needed (each reviewed from the URL conf's unauthenticated
POSTs):

- `POST accounts/password/reset/<uidb64>/<token>/` sets a password only with a valid token, an
  HMAC of the account's state under SECRET_KEY that expires (PASSWORD_RESET_TIMEOUT): there is
  nothing to guess, and a wrong token changes nothing.
- `POST lti/login/` only sends the browser back to a registered LMS with a fresh state and
  nonce (kept in the cache with an expiry); it makes no account, sends no mail and has nothing to
  guess. `POST lti/launch/` acts only on an id_token signed by a registered LMS's key, used once
  (its nonce is a unique row): a forged one is refused by the signature before anything else.
- `POST saml2/acs/` is a sign-on: its refusals count on the two `signon-*` doors above; an
  assertion that does not verify is counted on the address.
- `POST lti/account/` and `POST lti/link/` act only for a signed-in person with a verified
  launch waiting in their session. `POST accounts/logout/` ends one's own session.
- `POST api/v1/auth/token/` and `POST admin/login/` are password doors, under the lock-out.

The count is kept in PostgreSQL (`DoorCount`, one row per door and key, under a row lock), not
in Redis: with Redis down a door is exactly as shut as before, and nothing is a 500.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from apps.core.errors import DomainError

SIGNON_IDENTITY = "signon-identity"
SIGNON_ADDRESS = "signon-address"
CHECKIN_CODE = "checkin-code"
RESET_ADDRESS = "reset-address"
RESET_CLIENT = "reset-client"
DOORS = (SIGNON_IDENTITY, SIGNON_ADDRESS, CHECKIN_CODE, RESET_ADDRESS, RESET_CLIENT)


class TooManyTries(DomainError):
    """A door's limit was reached: 429, with when to try again."""

    status_code = 429
    code = "too_many_tries"

    def __init__(self, message: str, *, until: dt.datetime, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.until = until

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil((self.until - timezone.now()).total_seconds()))


@dataclass(frozen=True)
class Limit:
    tries: int
    window: dt.timedelta


def limit_of(door: str) -> Limit:
    spec = settings.DOOR_LIMITS[door]
    return Limit(int(spec["tries"]), dt.timedelta(seconds=int(spec["window_s"])))


def client_address(request: HttpRequest | None) -> str:
    """The address a request comes from, read as the log-in lock-out reads it
    (apps.core.addresses: `AXES_PROXY_COUNT` decides whether X-Forwarded-For is believed)."""
    if request is None:
        return ""
    from apps.core.addresses import client_address as forwarded_client

    return forwarded_client(request)


def _key(raw: str) -> str:
    text = raw.strip()
    if len(text) <= 200:
        return text
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Knock:
    count: int  # tries in the current window, this one included
    until: dt.datetime  # when the window ends

    def over(self, door: str) -> bool:
        return self.count > limit_of(door).tries


def shut_until(door: str, key: str, *, now: dt.datetime | None = None) -> dt.datetime | None:
    """When the door opens again for this key, if it is shut now (the limit used up in the
    current window); None when it is open. An empty key is never shut."""
    from apps.core.models import DoorCount

    if not key:
        return None
    now = now or timezone.now()
    limit = limit_of(door)
    row = DoorCount.objects.filter(door=door, key=_key(key)).first()
    if row is None or row.window_started + limit.window <= now or row.count < limit.tries:
        return None
    return row.window_started + limit.window


def knock(door: str, key: str, *, now: dt.datetime | None = None) -> Knock:
    """Count one try of this key at this door (in its own transaction, so a refusal that rolls
    back its request still counts) and say how many it has had in the window. An empty key is
    not counted: strangers never share a name."""
    from apps.core.models import DoorCount

    now = now or timezone.now()
    limit = limit_of(door)
    if not key:
        return Knock(0, now + limit.window)
    key = _key(key)
    for _ in range(2):
        try:
            with transaction.atomic():
                row = DoorCount.objects.select_for_update().filter(door=door, key=key).first()
                if row is None:
                    row = DoorCount.objects.create(door=door, key=key, window_started=now, count=1)
                elif row.window_started + limit.window <= now:
                    row.window_started, row.count = now, 1
                    row.save(update_fields=["window_started", "count"])
                else:
                    row.count += 1
                    row.save(update_fields=["count"])
                return Knock(row.count, row.window_started + limit.window)
        except IntegrityError:  # another request made the row first: lock it and count again
            continue
    raise RuntimeError("door count could not be written")  # pragma: no cover


def clear(door: str, key: str) -> None:
    """Forget this key's tries (a successful sign-on, staff unlocking)."""
    from apps.core.models import DoorCount

    if key:
        DoorCount.objects.filter(door=door, key=_key(key)).delete()


def sweep(now: dt.datetime) -> list[str]:
    """Drop the counts whose window has passed (the job sweep, every minute)."""
    from apps.core.models import DoorCount

    longest = max(limit_of(door).window for door in DOORS)
    gone, _ = DoorCount.objects.filter(window_started__lt=now - longest).delete()
    return [f"{gone} door counts past their window dropped"] if gone else []


def check_limits() -> list[str]:
    """Problems with `DOOR_LIMITS`: a door without a limit, or a limit that is not a positive
    whole number (the start-up check reports them)."""
    problems = []
    configured = getattr(settings, "DOOR_LIMITS", {})
    for door in DOORS:
        spec = configured.get(door)
        if not isinstance(spec, dict):
            problems.append(f"DOOR_LIMITS has no limit for the door {door!r}.")
            continue
        for field in ("tries", "window_s"):
            value = spec.get(field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"DOOR_LIMITS[{door!r}][{field!r}] must be a whole number ≥ 1.")
    return problems
