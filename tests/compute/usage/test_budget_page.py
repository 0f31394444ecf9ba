"""The budget page as staff read it: the dry-run banner only in a dry run, and a burn-down whose
picture says what its text says — a run-out day past the chart's edge is drawn as a marker at
the edge, never as the projection meeting the budget there."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET  # the Element type; parsing goes through defusedxml
from decimal import Decimal

import pytest
from defusedxml.ElementTree import fromstring
from django.test import Client

from apps.compute.models import ComputePolicy, Node, NodeStatusChange
from apps.compute.usage import metering as usage
from apps.core.models import Role
from tests.factories import member

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def _page(course, user) -> str:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    response = c.get(f"/c/{course.code}/compute/budget/")
    assert response.status_code == 200
    return response.content.decode()


def _run(node: Node, start: dt.datetime, hours: float) -> None:
    NodeStatusChange.objects.create(node=node, status="RUNNING", at=start)
    NodeStatusChange.objects.create(
        node=node, status="TERMINATED", at=start + dt.timedelta(hours=hours)
    )


def _projection(svg: str) -> tuple[ET.Element, float, list[str]]:
    root = fromstring(svg)
    dotted = [e for e in root.iter(f"{SVG}line") if e.get("stroke-dasharray") == "3 4"]
    assert len(dotted) == 1, "one projection line"
    budget_y = next(
        float(e.get("y1", "0")) for e in root.iter(f"{SVG}line") if e.get("stroke") == "#a32018"
    )
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    return dotted[0], budget_y, texts


def test_with_a_live_provider_the_budget_page_has_no_dry_run_banner(ee290, settings) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    settings.COMPUTE_PROVIDER = "dry-run"
    assert "Dry run: the running time below" in _page(ee290, staff)
    settings.COMPUTE_PROVIDER = "gcp"
    page = _page(ee290, staff)
    assert "Dry run" not in page
    assert "no budget e-mail is sent until" not in page


def test_a_run_out_day_past_the_charts_edge_is_a_marker_not_the_budget_met_at_the_edge(
    ee290, time_machine
) -> None:  # type: ignore[no-untyped-def]
    """A slow burn: one node-hour a week against $250,000 runs out decades away. The chart ends
    400 days after the first spend; the projection stops there at the spend it reaches, and the
    chart and the page both name the run-out day."""
    staff = member(ee290, Role.INSTRUCTOR)
    ComputePolicy.objects.filter(course=ee290).update(
        price_per_node_hour=Decimal("88.49"), credit_budget=Decimal("250000")
    )
    node = Node.objects.filter(course=ee290).order_by("name").first()
    t0 = dt.datetime(2026, 1, 20, 17, 0, tzinfo=dt.UTC)
    _run(node, t0, 1)
    now = t0 + dt.timedelta(days=3)
    time_machine.move_to(now)
    b = usage.budget(ee290, now)
    assert b.runs_out is not None
    end = usage.chart_end(b)
    assert end == b.daily[0][0] + dt.timedelta(days=usage.CHART_DAYS)
    assert b.runs_out.year == 2080  # $12.64 a day against $249,911.51 left

    line, budget_y, texts = _projection(usage.burndown_svg(b, ee290.timezone))
    y_end = float(line.get("y2", "0"))
    assert y_end > budget_y + 50, "the projection ends well below the budget line"
    # The value where it stops is the spend the last week's rate gives on the chart's last day.
    base, top = 300 - 36, 16
    at_edge = float(b.budget) * (base - y_end) / (base - top)
    want = float(b.spent + b.rate_per_day * (end - b.daily[-1][0]).days)
    assert at_edge == pytest.approx(want, rel=0.02)
    assert f"beyond the chart: runs out {b.runs_out.isoformat()}" in texts

    page = _page(ee290, staff)
    said = b.runs_out.strftime("%a %-d %b %Y")
    assert f"the credits run out on <strong>{said}</strong>" in page
    assert f"the credits run out beyond it, on {said}" in page
    assert f"The chart ends on {end.strftime('%a %-d %b %Y')}" in page


def test_a_run_out_day_inside_the_chart_is_where_the_projection_meets_the_budget(
    ee290, time_machine
) -> None:  # type: ignore[no-untyped-def]
    ComputePolicy.objects.filter(course=ee290).update(
        price_per_node_hour=Decimal("90.00"), credit_budget=Decimal("10000")
    )
    node = Node.objects.filter(course=ee290).order_by("name").first()
    t0 = dt.datetime(2026, 2, 2, 8, 0, tzinfo=dt.UTC)
    for day in range(7):
        _run(node, t0 + dt.timedelta(days=day), 10)
    now = t0 + dt.timedelta(days=7)
    time_machine.move_to(now)
    b = usage.budget(ee290, now)
    assert b.runs_out is not None
    assert usage.chart_end(b) == b.runs_out
    line, budget_y, texts = _projection(usage.burndown_svg(b, ee290.timezone))
    assert float(line.get("y2", "0")) == pytest.approx(budget_y)
    assert float(line.get("x2", "0")) == pytest.approx(640 - 16)
    assert not [t for t in texts if "beyond the chart" in t]


def test_a_burn_so_slow_it_would_outlast_the_calendar_says_so_instead_of_failing(
    ee290, time_machine
) -> None:  # type: ignore[no-untyped-def]
    """Seconds of one node in the last week against a large budget: the run-out day would fall
    past year 9999, which no date can hold (the term walk met it in week 1: a 500). The page
    says the credits outlast a century, and names no day."""
    staff = member(ee290, Role.INSTRUCTOR)
    ComputePolicy.objects.filter(course=ee290).update(
        price_per_node_hour=Decimal("1.00"), credit_budget=Decimal("9000000")
    )
    node = Node.objects.filter(course=ee290).order_by("name").first()
    t0 = dt.datetime(2026, 1, 20, 17, 0, tzinfo=dt.UTC)
    _run(node, t0, 3 / 60)  # three minutes: $0.01 a day over the week, 900 million days left
    now = t0 + dt.timedelta(days=3)
    time_machine.move_to(now)
    b = usage.budget(ee290, now)
    assert b.rate_per_day == Decimal("0.01")
    assert b.runs_out is None
    page = _page(ee290, staff)
    assert "At that rate the credits last more than a century." in page
    assert "they do not run out" not in page
