from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class EmailValidator(OAuth2Validator):
    """Puts the e-mail (and whether it is verified) in the ID token and userinfo. A user whose
    last name is "Unverified" gets email_verified false, for the refusal test."""

    oidc_claim_scope = None  # every claim, whatever scopes were granted

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "email": user.email,
            "email_verified": user.last_name != "Unverified",
            "name": user.get_full_name(),
        }
