import pytest


@pytest.fixture(autouse=True)
def _eager(celery_eager):  # type: ignore[no-untyped-def]
    """Publishing queues e-mails: run them in-process here."""
    return celery_eager
