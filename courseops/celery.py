"""The Celery app. Configuration comes from Django settings (CELERY_* names)."""

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "courseops.settings.dev")

app = Celery("courseops")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _redbeat_names(sender: Celery, **_: Any) -> None:
    """RedBeat asks whether its settings are present by their bare names (`redbeat_redis_url`),
    which Django's CELERY_ prefix hides: without this it warns and drops its Redis options (the
    socket timeouts that make a cut-off beat give up its turn)."""
    for key in list(sender.conf.keys()):
        if key.startswith("CELERY_REDBEAT_"):
            sender.conf[key.removeprefix("CELERY_").lower()] = sender.conf[key]
