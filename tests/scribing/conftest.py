import datetime as dt

import pytest
import time_machine

# The Monday before the first EE 290 lecture: every lecture is still to come, so the solver may
# use all 26 (it never assigns a lecture that has already been held).
BEFORE_TERM = dt.datetime(2026, 1, 12, 17, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def _eager(celery_eager):  # type: ignore[no-untyped-def]
    """Publishing and swaps queue e-mails: run them in-process here."""
    return celery_eager


@pytest.fixture
def before_term():  # type: ignore[no-untyped-def]
    """The clock at the Monday before the term (ticking), for a solve over every lecture."""
    with time_machine.travel(BEFORE_TERM, tick=True) as traveller:
        yield traveller
