import pytest


@pytest.fixture(autouse=True)
def _eager(celery_eager):  # type: ignore[no-untyped-def]
    """Publishing and swaps queue e-mails: run them in-process here."""
    return celery_eager
