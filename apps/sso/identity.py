"""Whom a campus sign-on becomes. An identity is its issuer + subject:

1. linked already → that account (if active), whatever e-mail the provider sends now;
2. the person signed in to courseops pressed "Link my campus account" → linked to them;
3. otherwise the provider's verified e-mail may make the first link — if it passes the one
   e-mail rule of every first link (`apps.core.emails.first_link_email`: NFKC, one script,
   valid IDNA) — but only to a student on a roster: an account with staff rights in any
   course, or an administrator, is never taken by e-mail alone (they sign in with their
   password and link, or an administrator runs `manage.py sso_link`).
Every link is an audit row."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.http import HttpRequest

from apps.core.emails import EmailRefused, first_link_email
from apps.core.models import Membership, Role, User
from apps.core.services import audit_record
from apps.sso.models import SsoIdentity
from apps.sso.refusals import refuse

STAFF_ROLES = (Role.TA, Role.INSTRUCTOR)
LINK_INTENT = "sso_link_for"  # session key: the account that pressed "Link my campus account"


def has_staff_rights(user: User) -> bool:
    return (
        user.is_superuser
        or user.is_staff
        or Membership.objects.filter(user=user, is_active=True, role__in=STAFF_ROLES).exists()
    )


def link(*, user: User, provider: str, issuer: str, subject: str, how: str) -> SsoIdentity:
    with transaction.atomic():
        identity = SsoIdentity.objects.create(
            provider=provider, issuer=issuer, subject=subject, user=user, how=how
        )
        audit_record(
            actor=user,
            action="auth.sso_linked",
            after={"provider": provider, "issuer": issuer, "subject": subject, "how": how},
        )
    return identity


def identity_user(
    request: HttpRequest | None, *, provider: str, issuer: str, subject: str, email: str
) -> User | None:
    """The account this identity signs in as, linking it when the rules allow; None (with the
    refusal recorded for the refusal page) otherwise."""
    if not issuer or not subject:
        refuse(
            request,
            email=email,
            why="The sign-on did not say who you are.",
            provider=provider,
            issuer=issuer,
            subject=subject,
        )
        return None
    linked = (
        SsoIdentity.objects.filter(issuer=issuer, subject=subject).select_related("user").first()
    )
    if linked is not None:
        if not linked.user.is_active:
            refuse(
                request,
                email=email,
                why="This account is switched off.",
                provider=provider,
                issuer=issuer,
                subject=subject,
            )
            return None
        return linked.user
    current = getattr(request, "user", None)
    # Only a link the person asked for, signed in (the button on Campus accounts), links to the
    # account in the session: someone else signing on at a shared computer never does.
    session = getattr(request, "session", None)
    asked = session.pop(LINK_INTENT, None) if session is not None else None
    if current is not None and current.is_authenticated and asked == current.pk:
        if SsoIdentity.objects.filter(issuer=issuer, user=current).exists():
            refuse(
                request,
                email=email,
                why="Your courseops account is already linked to another campus account.",
                provider=provider,
                issuer=issuer,
                subject=subject,
            )
            return None
        return _linked(request, current, provider, issuer, subject, SsoIdentity.How.CONFIRMED)
    try:
        address = first_link_email(email)
    except EmailRefused as exc:
        refuse(
            request,
            email=email,
            why=f"courseops links nobody by this address: {exc}",
            provider=provider,
            issuer=issuer,
            subject=subject,
        )
        return None
    user = User.objects.filter(email=address, is_active=True).first()
    if user is not None and (
        has_staff_rights(user) or SsoIdentity.objects.filter(issuer=issuer, user=user).exists()
    ):
        refuse(
            request,
            email=email,
            why="This account has staff or administrator rights (or another campus account), so "
            "an e-mail address alone does not sign it in. Log in with your password, then link "
            "your campus account under Campus accounts; or ask the site administrator.",
            provider=provider,
            issuer=issuer,
            subject=subject,
        )
        return None
    if user is None or not user.memberships.filter(is_active=True).exists():
        refuse(
            request,
            email=email,
            why="This e-mail address is on no course's roster in courseops.",
            provider=provider,
            issuer=issuer,
            subject=subject,
        )
        return None
    return _linked(request, user, provider, issuer, subject, SsoIdentity.How.FIRST_SIGN_ON)


def _linked(
    request: HttpRequest | None,
    user: User,
    provider: str,
    issuer: str,
    subject: str,
    how: str,
) -> User | None:
    try:
        link(user=user, provider=provider, issuer=issuer, subject=subject, how=how)
    except IntegrityError:  # two first sign-ons at once: the other one linked it
        linked = SsoIdentity.objects.filter(issuer=issuer, subject=subject).first()
        if linked is None or linked.user_id != user.pk:
            refuse(
                request,
                email=user.email,
                why="Try signing on again.",
                provider=provider,
                issuer=issuer,
                subject=subject,
            )
            return None
    return user
