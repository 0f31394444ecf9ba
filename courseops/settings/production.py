"""Production: behind HTTPS, PostgreSQL and Redis. Passes `check --deploy --fail-level WARNING`."""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import SECRET_KEY, env_bool

DEBUG = False
if len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("Set SECRET_KEY to a random string of at least 50 characters.")
# Every e-mail link, calendar feed and LTI/SAML address is built from SITE_URL: a server that
# guessed it would mail links to http://127.0.0.1:8000.
if not os.environ.get("SITE_URL", "").startswith(("https://", "http://")):
    raise ImproperlyConfigured(
        "Set SITE_URL to the address people use, e.g. https://courseops.example.edu."
    )

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
