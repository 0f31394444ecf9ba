from __future__ import annotations

import pytest

from apps.gradebook.models import ScoreEntry


@pytest.fixture
def ee290_demo(ee290_demo):  # type: ignore[no-untyped-def]
    """The demo course without its demo scores: these tests enter their own."""
    ScoreEntry.objects.filter(course=ee290_demo).delete()
    return ee290_demo
