"""Development: `make run`. SQLite unless DATABASE_URL is set; Celery eager unless REDIS_URL is."""

from .base import *  # noqa: F403
from .base import env_bool, env_list

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = SECRET_KEY or "dev-only-insecure-key-do-not-use-in-production"  # noqa: F405
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")
# `curl 127.0.0.1:8000/metrics` works on a developer's machine; production needs the token.
METRICS_TRUST_LOOPBACK = env_bool("METRICS_TRUST_LOOPBACK", True)
# Django's runserver serves static files from the app folders; WhiteNoise is for production.
INSTALLED_APPS = [a for a in INSTALLED_APPS if a != "whitenoise.runserver_nostatic"]  # noqa: F405
MIDDLEWARE = [m for m in MIDDLEWARE if not m.startswith("whitenoise")]  # noqa: F405
# Serve static files from the app folders without collectstatic while developing.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
