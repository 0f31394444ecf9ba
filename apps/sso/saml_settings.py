"""SAML_CONFIG (pysaml2's SP configuration), without importing Django models: settings import
this. ACS by HTTP-POST, requests by HTTP-Redirect, signed assertions required, unsolicited
responses refused."""

from __future__ import annotations

import os
from typing import Any


def build(
    *, base_url: str, metadata: dict[str, Any], key_file: str, cert_file: str
) -> dict[str, Any]:
    from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT

    base = base_url.rstrip("/")
    return {
        "entityid": os.environ.get("SAML_SP_ENTITY_ID", f"{base}/saml2/metadata/"),
        "xmlsec_binary": os.environ.get("SAML_XMLSEC_BINARY", "/usr/bin/xmlsec1"),
        "allow_unknown_attributes": True,
        "service": {
            "sp": {
                "name": "courseops",
                "endpoints": {
                    "assertion_consumer_service": [(f"{base}/saml2/acs/", BINDING_HTTP_POST)]
                },
                "allow_unsolicited": False,
                "authn_requests_signed": False,
                "want_assertions_signed": True,
                "want_response_signed": False,
            }
        },
        "metadata": metadata,
        "key_file": key_file,
        "cert_file": cert_file,
        "encryption_keypairs": [{"key_file": key_file, "cert_file": cert_file}],
        "preferred_binding": {"single_sign_on_service": [BINDING_HTTP_REDIRECT]},
    }


def from_environment(site_url: str) -> dict[str, Any]:
    url = os.environ.get("SAML_IDP_METADATA_URL", "")
    path = os.environ.get("SAML_IDP_METADATA_FILE", "")
    return build(
        base_url=site_url,
        metadata={"remote": [{"url": url}]} if url else {"local": [path]},
        key_file=os.environ.get("SAML_SP_KEY_FILE", ""),
        cert_file=os.environ.get("SAML_SP_CERT_FILE", ""),
    )
