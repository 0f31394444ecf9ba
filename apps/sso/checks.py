"""Start-up check: a server set up for SAML sign-on has the xmlsec1 program pysaml2 needs."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register

from apps.core.checks import see


@register()
def xmlsec_present(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    from apps.sso.saml import xmlsec_missing

    missing = xmlsec_missing()
    if not missing:
        return []
    return [
        Error(
            f"SAML sign-on is configured but {missing} (xmlsec1) is missing: the SAML pages "
            "answer 503 and nobody can sign on through the campus IdP.",
            hint=see(
                "courseops.E006",
                "apt-get install xmlsec1, or set SAML_XMLSEC_BINARY to where it is.",
            ),
            id="courseops.E006",
        )
    ]
