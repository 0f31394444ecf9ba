"""The tool's RSA key pair (pylti1p3's LtiToolKey): made once, the private half never shown."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pylti1p3.contrib.django.lti1p3_tool_config.models import LtiToolKey

KEY_NAME = "courseops"


def tool_key() -> LtiToolKey:
    found = LtiToolKey.objects.filter(name=KEY_NAME).first()
    if found is not None:
        return found
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return LtiToolKey.objects.create(
        name=KEY_NAME,
        private_key=private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
        public_key=private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode(),
    )
