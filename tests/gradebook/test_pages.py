"""The staff board says in words what its colours say, and its histograms' numbers are a table."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.core.models import User

pytestmark = pytest.mark.django_db


def test_the_board_marks_low_scores_and_at_risk_in_text_and_tables_its_histograms(  # type: ignore[no-untyped-def]
    ee290_demo,
) -> None:
    staff = Client()
    staff.force_login(User.objects.get(email="instructor@example.edu"))
    html = staff.get(f"/c/{ee290_demo.code}/gradebook/?status=at-risk").content.decode()
    at_risk = re.findall(r'<tr class="risk">(.*?)</tr>', html, re.S)
    assert at_risk  # student05 attends a third of the lectures
    for row in at_risk:
        assert '<div class="small bad">at risk</div>' in row
        assert '<td class="cell-bad" title="below the satisfactory threshold;' in row
        assert "▼ " in row
    table = html[html.index("<caption>Students per tenth") :]
    table = table[: table.index("</table>")]
    participation = re.search(
        r'<th scope="row">Attendance &amp; participation</th>(.*?)</tr>', table
    )
    assert participation is not None
    counts = [int(n) for n in re.findall(r"<td>(\d+)</td>", participation.group(1))]
    assert sum(counts[:10]) + counts[10] == 40  # every student counted once: a tenth or no score
