"""The course's cloud project follows the board.

What the board wants of a node is computed from the database when a job runs, never stored in
the job: the active members of the group holding it, plus — while an approved window is open —
the requesting group's members, each key as `name:type body courseops` in the instance's
`ssh-keys` and, when OS Login is on for the instance (which makes `ssh-keys` ignored), each
person's campus e-mail as their Google identity in the instance's `roles/compute.osLogin`
binding; the static IP of the allocation holding it as nic0's external address; the network tag
of every open window it is in; and one firewall rule per open window, targeting that tag. A job
therefore only says *which* thing to bring in line (`node:<id>`, `rules`, `start:<id>`,
`stop:<id>`), so running it twice, late or after a newer change is harmless, and the reconcile
task finds and queues whatever drifted.

Lines of `ssh-keys` without the `courseops` comment (staff's own, an image's) are kept as they
are; rules whose names do not start with `courseops-` are never touched.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.compute.board import access
from apps.compute.board.logins import unix_names
from apps.compute.cloud.providers import is_live, provider_for, provider_name
from apps.compute.cloud.providers.base import (
    MANAGED_RULE_PREFIX,
    MANAGED_TAG_PREFIX,
    OS_LOGIN_ROLE,
    CloudError,
    FingerprintConflict,
    Instance,
    Provider,
    Rule,
)
from apps.compute.models import (
    Allocation,
    CloudOp,
    ComputePolicy,
    Node,
    NodeStatusChange,
    SharingWindow,
    SshKey,
    WindowNode,
)
from apps.core.models import Course
from apps.core.queue import enqueue_on_commit, task_named
from apps.groups.models import GroupMembership

log = logging.getLogger(__name__)

MARK = "courseops"
PENDING = (CloudOp.Status.QUEUED, CloudOp.Status.RUNNING)


# ------------------------------------------------------------------ what the board wants


def _members(group_ids: Iterable[int]) -> list[int]:
    return list(
        GroupMembership.objects.filter(group_id__in=list(group_ids), left_at__isnull=True)
        .order_by("user_id")
        .values_list("user_id", flat=True)
        .distinct()
    )


def open_window_nodes(course_id: int, now: dt.datetime) -> list[WindowNode]:
    """The nodes of approved windows open at `now`."""
    return list(
        WindowNode.objects.filter(
            window__course_id=course_id,
            window__status=SharingWindow.Status.APPROVED,
            active=True,
            starts_at__lte=now,
            ends_at__gt=now,
        ).select_related("window")
    )


def _node_users(node: Node, now: dt.datetime) -> list[int]:
    """Who may log in to the node now: the holding group and open windows' borrowers."""
    holder = (
        Allocation.objects.filter(node=node, ended_at__isnull=True)
        .values_list("group_id", flat=True)
        .first()
    )
    groups = {holder} if holder else set()
    groups |= {
        wn.window.requester_id
        for wn in open_window_nodes(node.course_id, now)
        if wn.node_id == node.pk
    }
    return _members(g for g in groups if g)


def desired_keys(node: Node, now: dt.datetime | None = None) -> list[str]:
    """The managed `ssh-keys` lines the node should carry now, sorted."""
    users = _node_users(node, now or timezone.now())
    if not users:
        return []
    names = unix_names(node.course_id, users)
    keys = SshKey.objects.filter(user_id__in=users).order_by("user_id", "pk")
    return sorted(f"{names[k.user_id]}:{k.public_key} {MARK}" for k in keys)


def desired_logins(node: Node, now: dt.datetime | None = None) -> set[str]:
    """Under OS Login: the Google identities (campus e-mails) granted login on the node."""
    from django.contrib.auth import get_user_model

    users = _node_users(node, now or timezone.now())
    return {
        e.lower()
        for e in get_user_model().objects.filter(pk__in=users).values_list("email", flat=True)
        if e
    }


def desired_tags(node: Node, now: dt.datetime | None = None) -> list[str]:
    """The managed network tags the node should carry: one per open window it is in."""
    from apps.compute.board.selectors import window_bundle

    now = now or timezone.now()
    windows = {
        wn.window_id: wn.window
        for wn in open_window_nodes(node.course_id, now)
        if wn.node_id == node.pk
    }
    return sorted({access.firewall_target_tag(window_bundle(window=w)) for w in windows.values()})


def merged_tags(current: Iterable[str], want: list[str]) -> list[str]:
    kept = [t for t in current if not t.startswith(MANAGED_TAG_PREFIX)]
    return kept + [t for t in want if t not in kept]


def managed_tags(current: Iterable[str]) -> list[str]:
    return sorted(t for t in current if t.startswith(MANAGED_TAG_PREFIX))


def desired_address(node: Node) -> str | None:
    return (
        Allocation.objects.filter(node=node, ended_at__isnull=True)
        .values_list("static_ip__address", flat=True)
        .first()
    )


def desired_rules(course: Course, now: dt.datetime | None = None) -> dict[str, Rule]:
    from apps.compute.board.selectors import window_bundle

    now = now or timezone.now()
    windows = {wn.window_id: wn.window for wn in open_window_nodes(course.pk, now)}
    out = {}
    for w in windows.values():
        b = window_bundle(window=w)
        name = access.firewall_rule_name(b)
        out[name] = Rule(
            name=name,
            source_ranges=tuple(access.firewall_sources(b)),
            ports=tuple(access.firewall_ports(b)),
            description=f"{MARK} {b.title}",
            target_tags=(access.firewall_target_tag(b),),
        )
    return out


def merged_keys(current: str, want: list[str]) -> str:
    """`current` with its managed lines replaced by `want` (other lines kept, in order)."""
    kept = [ln for ln in current.splitlines() if ln.strip() and not ln.rstrip().endswith(MARK)]
    return "\n".join(kept + want)


def managed(current: str) -> list[str]:
    return sorted(ln.strip() for ln in current.splitlines() if ln.rstrip().endswith(MARK))


def _rule_same(a: Rule, b: Rule) -> bool:
    return (
        sorted(a.source_ranges) == sorted(b.source_ranges)
        and sorted(a.ports) == sorted(b.ports)
        and sorted(a.target_tags) == sorted(b.target_tags)
    )


# ------------------------------------------------------------------ jobs


def _project(course_id: int) -> str:
    project = (
        ComputePolicy.objects.filter(course_id=course_id).values_list("gcp_project", flat=True)
    ).first()
    if project:
        return project
    return (
        Node.objects.filter(course_id=course_id).values_list("gcp_project", flat=True).first() or ""
    )


def provider(course_id: int) -> Provider:
    return provider_for(course_id, _project(course_id))


def request(
    course_id: int,
    kind: str,
    node_id: int | None = None,
    *,
    why: str,
    actor_id: int | None = None,
    discard_local_ssd: bool = False,
) -> CloudOp:
    """Queue bringing one thing in line (in the caller's transaction; sent once it commits).
    A queued op for the same target absorbs the request; a queued stop discards Local SSD data
    only if every request it absorbed chose to (keeping is the safe side)."""
    target = f"{kind}:{node_id}" if node_id else kind
    op = CloudOp.objects.filter(
        course_id=course_id, target=target, status=CloudOp.Status.QUEUED
    ).first()
    if op is None:
        try:
            with transaction.atomic():
                op = CloudOp.objects.create(
                    course_id=course_id,
                    kind=kind,
                    node_id=node_id,
                    target=target,
                    why=why[:500],
                    requested_by_id=actor_id,
                    provider=provider_name(),
                    discard_local_ssd=discard_local_ssd,
                )
        except IntegrityError:
            op = CloudOp.objects.get(
                course_id=course_id, target=target, status=CloudOp.Status.QUEUED
            )
    else:
        if op.discard_local_ssd and not discard_local_ssd:
            CloudOp.objects.filter(pk=op.pk).update(discard_local_ssd=False)
        if why not in op.why:
            CloudOp.objects.filter(pk=op.pk).update(why=f"{op.why}; {why}"[:500])
    pk = op.pk
    enqueue_on_commit(
        lambda: task_named("compute.run_cloud_op").delay(pk),
        what="the cloud job",
        critical=False,
    )
    return op


def nodes_changed(course_id: int, node_ids: Iterable[int], why: str) -> None:
    for node_id in sorted(set(node_ids)):
        request(course_id, CloudOp.Kind.NODE, node_id, why=why)


def rules_changed(course_id: int, why: str) -> None:
    request(course_id, CloudOp.Kind.RULES, why=why)


def nodes_of_groups(group_ids: Iterable[int]) -> list[int]:
    return list(
        Allocation.objects.filter(group_id__in=list(group_ids), ended_at__isnull=True).values_list(
            "node_id", flat=True
        )
    )


def groups_changed(course_id: int, group_ids: Iterable[int], why: str) -> None:
    """Someone joined, left or was dropped: the nodes those groups hold, and the nodes of open
    windows they borrow, get their keys brought in line."""
    group_ids = [g for g in group_ids if g]
    nodes = set(nodes_of_groups(group_ids))
    nodes |= {
        wn.node_id
        for wn in open_window_nodes(course_id, timezone.now())
        if wn.window.requester_id in group_ids
    }
    nodes_changed(course_id, nodes, why)


def backoff(attempts: int) -> float:
    base = float(settings.COMPUTE_OP_BACKOFF_S)
    return float(min(base * 2 ** max(attempts - 1, 0), 300.0))


def _now_iso() -> str:
    return timezone.now().isoformat(timespec="seconds")


class Calls(list[dict[str, str]]):
    def add(self, call: str, result: str = "ok") -> None:
        self.append({"at": _now_iso(), "call": call, "result": result})


def _claim(op_id: int) -> CloudOp | None:
    """queued → running, unless another op for the same target holds a live lease."""
    now = timezone.now()
    with transaction.atomic():
        op = CloudOp.objects.select_for_update().filter(pk=op_id).first()
        if op is None or op.status != CloudOp.Status.QUEUED:
            return None
        if op.not_before and op.not_before > now + dt.timedelta(seconds=1):
            return None
        busy = CloudOp.objects.filter(
            course_id=op.course_id,
            target=op.target,
            status=CloudOp.Status.RUNNING,
            lease_until__gt=now,
        ).exists()
        if busy:
            return None
        op.status = CloudOp.Status.RUNNING
        op.attempts = F("attempts") + 1
        op.lease_until = now + dt.timedelta(seconds=settings.COMPUTE_OP_LEASE_S)
        op.provider = provider_name()
        op.save(update_fields=["status", "attempts", "lease_until", "provider"])
        op.refresh_from_db()
        return op


def run(op_id: int) -> str:
    """Run one queued op once: done, queued again with backoff, or failed with the reason."""
    op = _claim(op_id)
    if op is None:
        return "not runnable now"
    calls = Calls()
    try:
        p = provider(op.course_id)
        if op.kind == CloudOp.Kind.NODE and op.node is not None:
            converge_node(p, op.node, calls)
        elif op.kind == CloudOp.Kind.RULES:
            converge_rules(p, op.course, calls)
        elif op.kind in (CloudOp.Kind.START, CloudOp.Kind.STOP) and op.node is not None:
            power(p, op.node, op.kind, calls, discard_local_ssd=op.discard_local_ssd)
        _finish(op, CloudOp.Status.DONE, calls)
        return "done"
    except CloudError as exc:
        calls.add("", f"error: {exc.reason}")
        if exc.retryable and op.attempts < settings.COMPUTE_OP_MAX_ATTEMPTS:
            return _retry_later(op, calls, exc.reason, wait_s=exc.wait_s)
        why = (
            exc.reason if not exc.retryable else f"{exc.reason} (gave up after {op.attempts} tries)"
        )
        _finish(op, CloudOp.Status.FAILED, calls, reason=why)
        return f"failed: {why}"
    except Exception as exc:  # every job ends: a bug is a failure with its reason, not a hang
        log.exception("cloud op %s", op.pk)
        calls.add("", f"error: {type(exc).__name__}: {exc}")
        _finish(op, CloudOp.Status.FAILED, calls, reason=f"{type(exc).__name__}: {exc}"[:500])
        return "failed"


def _finish(op: CloudOp, status: str, calls: Calls, reason: str = "") -> None:
    CloudOp.objects.filter(pk=op.pk).update(
        status=status,
        reason=reason[:500],
        calls=(op.calls + list(calls))[-200:],
        finished_at=timezone.now(),
        lease_until=None,
    )


def _retry_later(op: CloudOp, calls: Calls, reason: str, *, wait_s: float = 0.0) -> str:
    delay = max(backoff(op.attempts), wait_s)
    try:
        with transaction.atomic():
            CloudOp.objects.filter(pk=op.pk).update(
                status=CloudOp.Status.QUEUED,
                reason=f"retrying in {delay:.0f} s: {reason}"[:500],
                calls=(op.calls + list(calls))[-200:],
                not_before=timezone.now() + dt.timedelta(seconds=delay),
                lease_until=None,
            )
    except IntegrityError:
        # A newer request for the same thing is queued: it brings it in line, from scratch.
        newer = CloudOp.objects.filter(
            course_id=op.course_id, target=op.target, status=CloudOp.Status.QUEUED
        ).first()
        _finish(
            op,
            CloudOp.Status.DONE,
            calls,
            reason=f"handed over to job #{newer.pk if newer else '?'} after: {reason}",
        )
        return "handed over"
    pk = op.pk
    enqueue_on_commit(
        lambda: task_named("compute.run_cloud_op").apply_async((pk,), countdown=delay),
        what="the cloud job retry",
        critical=False,
    )
    return f"retry in {delay:.0f} s"


def drain(course_id: int, *, rounds: int = 20) -> None:
    """Run every queued op of the course now, ignoring backoff, until none is left (for
    `manage.py cloud_sync --reconcile` and the tests in one process)."""
    for _ in range(rounds):
        ids = list(
            CloudOp.objects.filter(course_id=course_id, status=CloudOp.Status.QUEUED)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if not ids:
            return
        CloudOp.objects.filter(pk__in=ids).update(not_before=None)
        for pk in ids:
            run(pk)


# ------------------------------------------------------------------ bringing things in line


def converge_node(p: Provider, node: Node, calls: Calls) -> Instance:
    want = desired_keys(node)
    for _ in range(3):
        inst = p.instance(node.zone, node.name)
        if managed(inst.ssh_keys) == want:
            break
        before = set(managed(inst.ssh_keys))
        added, removed = len(set(want) - before), len(before - set(want))
        try:
            p.set_ssh_keys(inst, merged_keys(inst.ssh_keys, want))
        except FingerprintConflict as exc:
            calls.add(f"setMetadata {node.name} ssh-keys", f"{exc.reason}; reading it again")
            continue
        calls.add(f"setMetadata {node.name} ssh-keys: {len(want)} keys (+{added} −{removed})")
        break
    else:
        raise FingerprintConflict("the metadata kept changing under us (412 three times)")
    inst = p.instance(node.zone, node.name)
    want_tags = desired_tags(node)
    if managed_tags(inst.tags) != want_tags:
        p.set_tags(inst, merged_tags(inst.tags, want_tags))
        calls.add(f"setTags {node.name}: {', '.join(want_tags) or 'no window tags'}")
    if inst.os_login:
        # OS Login ignores `ssh-keys`: grant login through the instance's IAM policy instead.
        want_logins = desired_logins(node)
        if p.login_members(node.zone, node.name) != want_logins:
            p.set_login_members(node.zone, node.name, want_logins)
            calls.add(
                f"setIamPolicy {node.name}: {OS_LOGIN_ROLE} for {len(want_logins)} people "
                "(OS Login is on)"
            )
    address = desired_address(node)
    if inst.external_ip != address:
        if inst.access_config:
            p.detach_address(node.zone, node.name, inst.access_config)
            calls.add(f"deleteAccessConfig {node.name} ({inst.external_ip or 'ephemeral'})")
        if address:
            p.attach_address(node.zone, node.name, address)
            calls.add(f"addAccessConfig {node.name} {address}")
    Node.objects.filter(pk=node.pk).update(
        external_ip=address, synced_at=timezone.now(), os_login=inst.os_login
    )
    return inst


def converge_rules(p: Provider, course: Course, calls: Calls) -> None:
    want = desired_rules(course)
    have = {r.name: r for r in p.rules() if r.name.startswith(MANAGED_RULE_PREFIX)}
    for name, rule in sorted(have.items()):
        if name not in want or not _rule_same(rule, want[name]):
            p.delete_rule(name)
            calls.add(f"firewalls.delete {name}")
            have.pop(name)
    for name, rule in sorted(want.items()):
        if name not in have:
            p.insert_rule(rule)
            calls.add(
                f"firewalls.insert {name}: tcp {','.join(rule.ports)} from "
                f"{','.join(rule.source_ranges)}"
            )


def power(
    p: Provider, node: Node, kind: str, calls: Calls, *, discard_local_ssd: bool = False
) -> None:
    if kind == CloudOp.Kind.START:
        p.start(node.zone, node.name)
        calls.add(f"instances.start {node.name}")
    else:
        inst = p.instance(node.zone, node.name)
        p.stop(node.zone, node.name, discard_local_ssd=discard_local_ssd)
        ssd = (
            f"; Local SSD ({inst.local_ssd_gb:,} GiB) "
            + ("discarded" if discard_local_ssd else "kept")
            if inst.local_ssd_gb
            else ""
        )
        calls.add(f"instances.stop {node.name}{ssd}")
    inst = p.instance(node.zone, node.name)
    record_status(node, inst.status)


def record_status(node: Node, status: str, at: dt.datetime | None = None) -> bool:
    """Note a new cloud status (with when it changed); False when it did not change."""
    at = at or timezone.now()
    with transaction.atomic():
        locked = Node.objects.select_for_update().get(pk=node.pk)
        if locked.cloud_status == status:
            return False
        NodeStatusChange.objects.create(node=locked, status=status, at=at)
        Node.objects.filter(pk=node.pk).update(cloud_status=status, cloud_status_at=at)
    node.cloud_status, node.cloud_status_at = status, at
    return True


# ------------------------------------------------------------------ comparing


@dataclass(frozen=True)
class Drift:
    target: str  # "node:<id>" or "rules"
    line: str


def drift(course: Course, p: Provider | None = None) -> list[Drift]:
    """Where the cloud differs from the board (keys, addresses, rules), one line each."""
    p = p or provider(course.pk)
    found = []
    insts = {i.name: i for i in p.instances()}
    for node in Node.objects.filter(course=course).exclude(status=Node.Status.RETIRED):
        inst = insts.get(node.name)
        if inst is None:
            found.append(Drift(f"node:{node.pk}", f"{node.name} is not in the project"))
            continue
        want, have = desired_keys(node), managed(inst.ssh_keys)
        if want != have:
            found.append(
                Drift(
                    f"node:{node.pk}",
                    f"{node.name} carries {len(have)} course keys; the board gives {len(want)}",
                )
            )
        want_tags = desired_tags(node)
        if managed_tags(inst.tags) != want_tags:
            found.append(
                Drift(
                    f"node:{node.pk}",
                    f"{node.name} carries window tags {managed_tags(inst.tags) or 'none'}; the "
                    f"board gives {want_tags or 'none'}",
                )
            )
        if inst.os_login:
            have_logins = p.login_members(node.zone, node.name)
            want_logins = desired_logins(node)
            if have_logins != want_logins:
                found.append(
                    Drift(
                        f"node:{node.pk}",
                        f"{node.name} has OS Login on: {len(have_logins)} people hold "
                        f"{OS_LOGIN_ROLE}; the board gives {len(want_logins)}",
                    )
                )
        address = desired_address(node)
        if inst.external_ip != address:
            found.append(
                Drift(
                    f"node:{node.pk}",
                    f"{node.name} has address {inst.external_ip or 'none'}; the board gives "
                    f"{address or 'none'}",
                )
            )
    want_rules = desired_rules(course)
    have_rules = {r.name: r for r in p.rules() if r.name.startswith(MANAGED_RULE_PREFIX)}
    for name in sorted(set(want_rules) | set(have_rules)):
        if name not in have_rules:
            found.append(Drift("rules", f"firewall rule {name} is missing"))
        elif name not in want_rules:
            found.append(Drift("rules", f"firewall rule {name} outlived its window"))
        elif not _rule_same(have_rules[name], want_rules[name]):
            found.append(Drift("rules", f"firewall rule {name} admits other addresses or ports"))
    return found


def reconcile(course: Course) -> tuple[int, list[Drift]]:
    """Refresh every node's status from the cloud and queue a job for whatever drifted (unless
    one is already queued or running). Returns (status changes, drift)."""
    p = provider(course.pk)
    changed = 0
    insts = {i.name: i for i in p.instances()}
    for node in Node.objects.filter(course=course):
        inst = insts.get(node.name)
        if inst is not None and record_status(node, inst.status):
            changed += 1
        if inst is not None and inst.os_login != node.os_login:
            # The board shows the OS Login username where OS Login is on (`board/logins.py`).
            Node.objects.filter(pk=node.pk).update(os_login=inst.os_login)
    found = drift(course, p)
    pending = set(
        CloudOp.objects.filter(course=course, status__in=PENDING).values_list("target", flat=True)
    )
    with transaction.atomic():
        for target in sorted({d.target for d in found} - pending):
            why = "; ".join(d.line for d in found if d.target == target)
            if target == "rules":
                rules_changed(course.pk, f"reconcile: {why}")
            else:
                nodes_changed(course.pk, [int(target.split(":")[1])], f"reconcile: {why}")
    return changed, found


def unexplained_drift(course_id: int) -> list[str]:
    """The `check_course` invariant, when the provider is live: the cloud matches the board
    except where a job is on its way to make it so."""
    if not is_live():
        return []
    course = Course.objects.get(pk=course_id)
    if not Node.objects.filter(course=course).exists():
        return []
    try:
        found = drift(course)
    except CloudError as exc:
        return [f"could not read the cloud project: {exc.reason}"]
    pending = set(
        CloudOp.objects.filter(course_id=course_id, status__in=PENDING).values_list(
            "target", flat=True
        )
    )
    return [d.line for d in found if d.target not in pending]


def pending_or_failed(course_id: int | None) -> Q:
    q = Q(status__in=PENDING) | Q(status=CloudOp.Status.FAILED)
    return q & Q(course_id=course_id) if course_id is not None else q
