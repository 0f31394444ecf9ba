"""Which courseops account a campus identity is: the identity provider (its issuer: the OpenID
provider's `iss`, the SAML IdP's entity id) and its subject (`sub`, the SAML NameID), linked
once. A sign-on becomes only the account its identity is linked to; the e-mail it carries makes
the first link only for a student on a roster (`apps.sso.identity.identity_user` says when)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SsoIdentity(models.Model):
    class How(models.TextChoices):
        FIRST_SIGN_ON = "first-sign-on", "First sign-on of a student on a roster"
        CONFIRMED = "confirmed", "Linked by the person, signed in to courseops"
        ADMIN = "admin", "Linked by an administrator (manage.py sso_link)"

    provider = models.CharField(max_length=10, help_text="oidc or saml")
    issuer = models.CharField(max_length=500, help_text="The provider's issuer or entity id.")
    subject = models.CharField(max_length=500, help_text="The provider's id of the person.")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities"
    )
    how = models.CharField(max_length=20, choices=How.choices)
    linked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_linked_once"),
            models.UniqueConstraint(fields=["issuer", "user"], name="sso_one_identity_per_issuer"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.issuer} {self.subject} → {self.user_id}"
