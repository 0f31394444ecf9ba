"""GPU-hours, the credit budget and idle nodes.

A node costs money while the cloud says RUNNING: its status history (NodeStatusChange, kept by
the reconcile task and by every start/stop job) gives running intervals; intersected with
allocations they give each group's GPU-hours, and times the course file's price per node-hour
the spend. The burn-down projects the last seven days' rate forward to the day the credits run
out. Idle: the node agent's samples; a node whose busiest GPU stayed under the threshold for
the whole of the last `idle_hours` is idle — its group and staff hear once per idle spell, and
the course file may have it stopped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.compute.models import Allocation, ComputePolicy, GpuSample, Node, NodeStatusChange
from apps.compute.recipients import member_emails, staff_emails
from apps.compute.usage.rules import SILENT_AFTER
from apps.core.models import Course

Interval = tuple[dt.datetime, dt.datetime]
THRESHOLDS = (50, 80, 100)


StatusRow = tuple[int, str, dt.datetime]  # node id, cloud status, since when


def status_rows(node_ids: list[int], until: dt.datetime | None = None) -> list[StatusRow]:
    """The nodes' status changes (up to `until`), in node and time order: one query."""
    rows = NodeStatusChange.objects.filter(node_id__in=node_ids)
    if until is not None:
        rows = rows.filter(at__lte=until)
    return list(rows.order_by("node_id", "at").values_list("node_id", "status", "at"))


def running_intervals(node_ids: list[int], until: dt.datetime) -> dict[int, list[Interval]]:
    return intervals_of(status_rows(node_ids, until), node_ids, until)


def intervals_of(
    rows: list[StatusRow], node_ids: list[int], until: dt.datetime
) -> dict[int, list[Interval]]:
    """Each node's RUNNING intervals up to `until` from its status changes (`status_rows`, in
    node and time order; changes after `until` are left out), the last one open to `until`."""
    out: dict[int, list[Interval]] = {n: [] for n in node_ids}
    last: dict[int, tuple[str, dt.datetime]] = {}
    for node_id, status, at in rows:
        if at > until or node_id not in out:
            continue
        prev = last.get(node_id)
        if prev is not None and prev[0] == "RUNNING" and at > prev[1]:
            out[node_id].append((prev[1], at))
        last[node_id] = (status, at)
    for node_id, (status, at) in last.items():
        if status == "RUNNING" and until > at:
            out[node_id].append((at, until))
    return out


def _overlap(a: Interval, b: Interval) -> float:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return max((hi - lo).total_seconds(), 0.0)


RUN_OUT_HORIZON = 36_525  # days (a century): a run-out day beyond it is not named


@dataclass(frozen=True)
class GroupHours:
    group: str
    gpu_hours: float
    node_hours: float
    cost: Decimal


@dataclass(frozen=True)
class Budget:
    price: Decimal
    budget: Decimal
    spent: Decimal
    daily: list[tuple[dt.date, Decimal]]  # cumulative spend at the end of each day
    rate_per_day: Decimal  # the last seven days
    runs_out: dt.date | None
    groups: list[GroupHours]

    @property
    def pct(self) -> float:
        return float(self.spent / self.budget * 100) if self.budget else 0.0


def budget(course: Course, now: dt.datetime | None = None) -> Budget:
    now = now or timezone.now()
    policy = ComputePolicy.objects.filter(course=course).first()
    price = policy.price_per_node_hour if policy else Decimal(0)
    total = policy.credit_budget if policy else Decimal(0)
    nodes = {n.pk: n for n in Node.objects.filter(course=course)}
    runs = running_intervals(list(nodes), now)
    allocs = list(
        Allocation.objects.filter(course=course).select_related("group").order_by("started_at")
    )
    per_group: dict[str, list[float]] = {}
    for a in allocs:
        span = (a.started_at, a.ended_at or now)
        secs = sum(_overlap(span, iv) for iv in runs.get(a.node_id, []))
        if secs:
            row = per_group.setdefault(a.group.name, [0.0, 0.0])
            row[0] += secs / 3600 * nodes[a.node_id].gpu_count
            row[1] += secs / 3600
    node_secs = sum((b - a).total_seconds() for ivs in runs.values() for a, b in ivs)
    allocated = sum(r[1] for r in per_group.values()) * 3600
    if node_secs - allocated > 1:
        free = (node_secs - allocated) / 3600
        gpus = max((n.gpu_count for n in nodes.values()), default=8)
        per_group["(no group: running unallocated)"] = [free * gpus, free]
    groups = [
        GroupHours(
            name, round(g, 1), round(h, 2), (Decimal(str(h)) * price).quantize(Decimal("0.01"))
        )
        for name, (g, h) in sorted(per_group.items(), key=lambda kv: -kv[1][0])
    ]
    spent = (Decimal(str(node_secs / 3600)) * price).quantize(Decimal("0.01"))

    tz = course.tz
    starts = [a for ivs in runs.values() for a, _ in ivs]
    daily: list[tuple[dt.date, Decimal]] = []
    if starts:
        day = min(starts).astimezone(tz).date()
        last = now.astimezone(tz).date()
        while day <= last:
            end = min(dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=tz), now)
            secs = sum(_overlap((min(starts), end), iv) for ivs in runs.values() for iv in ivs)
            daily.append((day, (Decimal(str(secs / 3600)) * price).quantize(Decimal("0.01"))))
            day += dt.timedelta(days=1)
    week_ago = now - dt.timedelta(days=7)
    recent = sum(_overlap((week_ago, now), iv) for ivs in runs.values() for iv in ivs)
    rate = (Decimal(str(recent / 3600 / 7)) * price).quantize(Decimal("0.01"))
    runs_out = None
    # A run-out day further than a century is said as such, not as a day: a few minutes of
    # running against a large budget would put it past year 9999, which no date can hold.
    if rate > 0 and total > 0 and (left_days := float((total - spent) / rate)) <= RUN_OUT_HORIZON:
        runs_out = (now + dt.timedelta(days=max(left_days, 0))).astimezone(tz).date()
    return Budget(price, total, spent, daily, rate, runs_out, groups)


CHART_DAYS = 400  # the burn-down shows at most this many days from the first spend


def chart_end(b: Budget) -> dt.date | None:
    """The last day the burn-down shows: the run-out day, or the chart's edge when that is
    further (a slow burn can run out centuries away)."""
    if not b.daily:
        return None
    first, last = b.daily[0][0], b.daily[-1][0]
    end = max(b.runs_out or last, last)
    return min(end, first + dt.timedelta(days=CHART_DAYS))


def runs_out_beyond_chart(b: Budget) -> bool:
    end = chart_end(b)
    return bool(b.runs_out and end and b.runs_out > end)


def burndown_svg(b: Budget, tz_name: str) -> str:
    """Cumulative spend per day, the budget line, and the projection to the run-out day. When
    that day is past the chart's edge, the projection stops at the edge at the value it has
    there, and a marker says when the credits run out, so the picture never shows them running
    out on a day the text does not say."""
    from django.utils.html import escape

    w, h, left, bottom, top, right = 640, 300, 48, 36, 16, 16
    end = chart_end(b)
    if end is None:
        return ""
    first = b.daily[0][0]
    days = max((end - first).days, 1)
    top_value = float(max(b.budget, b.daily[-1][1], Decimal(1)))

    def x(day: dt.date) -> float:
        return left + (w - left - right) * (day - first).days / days

    def y(v: float) -> float:
        return h - bottom - (h - bottom - top) * v / top_value

    pts = " ".join(f"{x(d):.1f},{y(float(v)):.1f}" for d, v in b.daily)
    base = h - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {w} {h}" aria-labelledby="burn-title" font-family="system-ui, sans-serif" '
        f'font-size="14"><title id="burn-title">Credits spent by day: ${b.spent:,} of '
        f"${b.budget:,}</title>",
        f'<line x1="{left}" y1="{base}" x2="{w - right}" y2="{base}" stroke="#555"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base}" stroke="#555"/>',
        f'<polyline points="{pts}" fill="none" stroke="#2957c4" stroke-width="3"/>',
        f'<text x="{left - 6}" y="{base}" text-anchor="end" fill="#333">$0</text>',
    ]
    if b.budget:
        yb = y(float(b.budget))
        parts.append(
            f'<line x1="{left}" y1="{yb:.1f}" x2="{w - right}" y2="{yb:.1f}" stroke="#a32018" '
            f'stroke-width="2" stroke-dasharray="8 5"/>'
            f'<text x="{left + 6}" y="{yb - 6:.1f}" fill="#a32018">budget ${b.budget:,.0f}</text>'
        )
    if b.runs_out and b.budget:
        last_day, last_v = b.daily[-1]
        beyond = runs_out_beyond_chart(b)
        # Within the chart the projection meets the budget on the run-out day; beyond it, the
        # line stops at the edge at the spend the last week's rate gives there.
        at_end = last_v + b.rate_per_day * (end - last_day).days if beyond else b.budget
        x2, y2 = x(end), y(float(min(at_end, b.budget)))
        parts.append(
            f'<line class="projection" x1="{x(last_day):.1f}" y1="{y(float(last_v)):.1f}" '
            f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="#2957c4" stroke-width="2" '
            f'stroke-dasharray="3 4"/>'
        )
        if beyond:
            ty = y2 - 10 if y2 - 10 >= top + 14 else y2 + 20
            parts.append(
                f'<path class="beyond" d="M{x2 - 8:.1f},{y2 - 6:.1f} L{x2:.1f},{y2:.1f} '
                f'L{x2 - 8:.1f},{y2 + 6:.1f}" fill="none" stroke="#2957c4" stroke-width="2"/>'
                f'<text class="beyond" x="{w - right}" y="{ty:.1f}" text-anchor="end" '
                f'fill="#1d3f8f">beyond the chart: runs out {escape(b.runs_out.isoformat())}'
                f"</text>"
            )
    parts.append(
        f'<text x="{left}" y="{h - 10}" fill="#333">{escape(first.isoformat())}</text>'
        f'<text x="{w - right}" y="{h - 10}" text-anchor="end" fill="#333">'
        f"{escape(end.isoformat())} ({escape(tz_name)})</text></svg>"
    )
    return "".join(parts)


# ------------------------------------------------------------------ alerts


def budget_alert(course: Course, now: dt.datetime | None = None) -> int | None:
    """E-mail staff the first time spend crosses 50, 80 and 100 % of the credits; returns the
    threshold e-mailed now, if any. The row lock makes two runs send one e-mail. A dry run's
    stand-in statuses are not spend: nothing is e-mailed until the provider is live."""
    from apps.compute.cloud.providers import is_live
    from apps.core import outbox

    if not is_live():
        return None
    b = budget(course, now)
    if not b.budget:
        return None
    with transaction.atomic():
        policy = ComputePolicy.objects.select_for_update().get(course=course)
        crossed = [t for t in THRESHOLDS if b.pct >= t and t > policy.budget_alerted_pct]
        if not crossed:
            return None
        level = max(crossed)
        policy.budget_alerted_pct = level
        policy.save(update_fields=["budget_alerted_pct"])
        out = f"; at this rate they run out on {b.runs_out}" if b.runs_out else ""
        outbox.post(
            "compute.budget",
            [
                outbox.Mail(
                    staff_emails(course.pk),
                    f"[{course.code}] Compute credits: {b.pct:.0f}% used",
                    f"${b.spent:,} of ${b.budget:,} spent ({b.pct:.1f}%), ${b.rate_per_day:,} a "
                    f"day over the last week{out}.\n\nGPU-hours by group and the burn-down: "
                    f"{settings.SITE_URL}/c/{course.code}/compute/budget/\n",
                )
            ],
            course_id=course.pk,
            run=f"budget-{course.pk}-{level}",
        )
    return level


def idle_since(node: Node, hours: int, below: float, now: dt.datetime) -> bool:
    """True when samples cover the last `hours` and the busiest GPU stayed under `below`."""
    start = now - dt.timedelta(hours=hours)
    samples = list(
        GpuSample.objects.filter(node=node, at__gte=start - dt.timedelta(minutes=15), at__lte=now)
        .order_by("at")
        .values_list("at", "util_max")
    )
    if not samples or samples[0][0] > start + dt.timedelta(minutes=6):
        return False
    # A node that stopped reporting is "unknown", never idle (apps.compute.usage.rules).
    if now - samples[-1][0] >= SILENT_AFTER:
        return False
    return all(util < below for _, util in samples)


def idle_check(course: Course, now: dt.datetime | None = None) -> list[str]:
    """E-mail the group and staff about each node idle for `idle_hours` (once per idle spell:
    again only after a busy sample), and stop it when the course file says so."""
    from apps.compute.cloud import sync as cloud
    from apps.compute.models import CloudOp
    from apps.core import outbox

    now = now or timezone.now()
    policy = ComputePolicy.objects.filter(course=course).first()
    if policy is None:
        return []
    told = []
    for node in Node.objects.filter(course=course, cloud_status="RUNNING"):
        if not idle_since(node, policy.idle_hours, policy.idle_below_pct, now):
            continue
        if node.idle_alerted_at is not None:
            busy_after = GpuSample.objects.filter(
                node=node, at__gt=node.idle_alerted_at, util_max__gte=policy.idle_below_pct
            ).exists()
            if not busy_after:
                continue
        alloc = (
            Allocation.objects.filter(node=node, ended_at__isnull=True)
            .select_related("group")
            .first()
        )
        with transaction.atomic():
            n = Node.objects.filter(pk=node.pk, idle_alerted_at=node.idle_alerted_at).update(
                idle_alerted_at=now
            )
            if not n:
                continue  # another run told them
            stop = policy.idle_stop
            if stop:
                cloud.request(
                    course.pk,
                    CloudOp.Kind.STOP,
                    node.pk,
                    why=f"idle under {policy.idle_below_pct}% for {policy.idle_hours} h",
                )
            to = staff_emails(course.pk) + (member_emails(alloc.group_id) if alloc else [])
            who = alloc.group.name if alloc else "no group"
            cost = policy.price_per_node_hour
            outbox.post(
                "compute.idle",
                [
                    outbox.Mail(
                        to,
                        f"[{course.code}] {node.name} has been idle for {policy.idle_hours} h",
                        f"{node.name} ({who}) is running but its GPUs stayed under "
                        f"{policy.idle_below_pct}% for the last {policy.idle_hours} hours"
                        + (f", at ${cost:,} an hour" if cost else "")
                        + ".\n\n"
                        + (
                            "courseops is stopping it now, as the course's policy says; start it "
                            "again from the node page when you need it.\n"
                            if stop
                            else "Stop it from the node page if nothing is meant to run.\n"
                        )
                        + f"{settings.SITE_URL}/c/{course.code}/compute/\n",
                    )
                ],
                course_id=course.pk,
                run=f"idle-{node.pk}-{now.isoformat()}",
            )
        told.append(node.name)
    return told
