"""Sign-on's worker task: the password-reset e-mail (apps.sso.reset)."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="sso.password_reset_email")
def password_reset_email(email: str, domain: str, use_https: bool) -> int:
    """Look the address up and send each account its reset link; 0 for an unknown address."""
    from apps.sso.reset import send_reset

    return send_reset(email, domain=domain, use_https=use_https)
