"""Link a campus identity (issuer + subject) to an account by hand: for a staff member or an
administrator, whom an e-mail never signs in by itself, when password log-in is off."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError
from django.db.models import Q

from apps.core.models import User
from apps.sso.identity import link
from apps.sso.models import SsoIdentity


class Command(BaseCommand):
    help = "Link a campus sign-on identity (issuer + subject) to the account with this e-mail."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email", help="The courseops account's e-mail address.")
        parser.add_argument("--provider", choices=["oidc", "saml"], required=True)
        parser.add_argument(
            "--issuer", required=True, help="The OpenID provider's iss, or the SAML IdP entity id."
        )
        parser.add_argument(
            "--subject", required=True, help="The person's sub, or SAML persistent id / ePPN."
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Drop this identity's old link, and this account's old link at this issuer.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.by_email(options["email"]).first()
        if user is None:
            raise CommandError(f"No account has the e-mail address {options['email']!r}.")
        if options["replace"]:
            gone, _ = SsoIdentity.objects.filter(
                Q(issuer=options["issuer"], subject=options["subject"])
                | Q(issuer=options["issuer"], user=user)
            ).delete()
            self.stdout.write(f"Dropped {gone} old link(s).")
        try:
            link(
                user=user,
                provider=options["provider"],
                issuer=options["issuer"],
                subject=options["subject"],
                how=SsoIdentity.How.ADMIN,
            )
        except IntegrityError:
            raise CommandError(
                "That identity is linked already, or this account already has one at this "
                "issuer; run again with --replace to move the link."
            ) from None
        self.stdout.write(f"Linked {options['subject']} at {options['issuer']} to {user.email}.")
