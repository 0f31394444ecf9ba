"""Password reset that tells nobody whether an address has an account, by its answer or by its
time, and that is shut with every other password door when `PASSWORD_LOGIN=off`.

Django's reset form looks the address up and renders, signs and sends the e-mail inside the
request: with a real SMTP server a known address answered in about 88 ms and an unknown one in
14 ms. Here the request only queues `sso.password_reset_email` with the address, for every
address alike; the worker does the lookup and the sending (through the outbox, so a refused send
is retried). The page says the same thing either way.

Nobody's mailbox is flooded (`apps.core.doors`): at most `PASSWORD_RESETS_PER_ADDRESS` (3)
e-mails an hour go to one address and `PASSWORD_RESETS_PER_CLIENT` (20) requests an hour from
one client address are acted on; past either, the request is counted and audited, nothing is
queued, and the answer is the same page as always (it must not tell whether the address exists,
nor that a limit was reached, which a stranger could use to probe).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm, PasswordResetForm
from django.db import transaction
from django.http import HttpRequest

from apps.core import doors, outbox
from apps.core.emails import canonical_email
from apps.core.queue import enqueue_on_commit, task_named
from apps.core.services import audit_record
from apps.sso.switches import closed, password_login


class _OutboxResetForm(PasswordResetForm):
    """Django's form, with its e-mail recorded in the outbox instead of sent inline."""

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        from django.template import loader

        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        outbox.post(
            "sso.password_reset_email", [outbox.Mail([to_email], subject, body)], course_id=None
        )


def send_reset(email: str, *, domain: str, use_https: bool) -> int:
    """The worker's half: find the accounts with `email` and send each its link."""
    form = _OutboxResetForm({"email": email})
    if not form.is_valid():
        return 0
    found = len(list(form.get_users(email)))
    form.save(domain_override=domain, use_https=use_https)
    return found


class QueuedResetForm(PasswordResetForm):
    """What the page uses: `save` only queues the worker's half, the same for every address."""

    def save(self, *args: Any, **kwargs: Any) -> None:
        request: HttpRequest = kwargs["request"]
        email = self.cleaned_data["email"]
        domain = kwargs.get("domain_override") or request.get_host()
        use_https = bool(kwargs.get("use_https"))
        if _over_limit(request, email):
            return
        enqueue_on_commit(
            lambda: task_named("sso.password_reset_email").delay(email, domain, use_https),
            what="the password-reset e-mail",
            critical=False,
            # The queue did not answer: send it here rather than lose it (slower, not a 500).
            on_failure=lambda exc: _send_here(email, domain, use_https),
        )


def _over_limit(request: HttpRequest, email: str) -> bool:
    """Count this request on both reset doors; True (audited) when either is past its limit."""
    address = doors.client_address(request)
    by_email = doors.knock(doors.RESET_ADDRESS, canonical_email(email))
    by_client = doors.knock(doors.RESET_CLIENT, address)
    over = by_email.over(doors.RESET_ADDRESS) or by_client.over(doors.RESET_CLIENT)
    if over:
        with transaction.atomic():
            audit_record(
                actor=None,
                action="auth.reset_limited",
                after={
                    "email": canonical_email(email),
                    "ip": address,
                    "for_address": by_email.count,
                    "from_client": by_client.count,
                },
            )
    return over


def _send_here(email: str, domain: str, use_https: bool) -> None:
    send_reset(email, domain=domain, use_https=use_https)


class PasswordResetView(auth_views.PasswordResetView):
    form_class = QueuedResetForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not password_login():
            return closed(request)
        return super().dispatch(request, *args, **kwargs)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """A reset link mailed before password log-in was turned off sets no password now."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not password_login():
            return closed(request)
        return super().dispatch(request, *args, **kwargs)


class HelpedPasswordChangeForm(PasswordChangeForm):
    """Django's change form, with help on the one field that has none (every field says what it
    wants, read with it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["old_password"].help_text = "The password you log in with now."


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = HelpedPasswordChangeForm
