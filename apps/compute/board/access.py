"""Access files for a group's own node or a sharing window: /etc/hosts block, SSH config,
torchrun launch environment per node, and the GCP firewall rule. Pure: plain values in, text out.

Traffic between teams' nodes goes over their static external IPs, so every file uses those;
the firewall admits exactly the participants' IPs as /32 for the window — their external
addresses and their internal ones (NCCL between nodes of one VPC network goes over internal
addresses) — and applies only to the window's nodes, through a network tag the provider puts on
them for the window ("If you omit the target, the rule applies to all instances in the
network": https://cloud.google.com/firewall/docs/firewalls#rule_assignment).
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass

from apps.core.timefmt import format_instant


@dataclass(frozen=True)
class Participant:
    rank: int
    node: str  # instance name, also the host alias
    external_ip: str
    internal_ip: str
    group: str
    gpus: int = 8


@dataclass(frozen=True)
class Bundle:
    title: str  # e.g. "ee290-sp26 window #12"
    slug: str  # safe for file and resource names, e.g. "ee290-sp26-w12"
    participants: tuple[Participant, ...]
    gcp_project: str
    master_port: int = 29500
    starts: dt.datetime | None = None
    ends: dt.datetime | None = None
    zone: str = "UTC"  # the course's: the window is read in course time, its zone named


def _span(b: Bundle) -> str:
    if b.starts and b.ends:
        return f" valid {format_instant(b.starts, b.zone)} – {format_instant(b.ends, b.zone)}"
    return ""


def hosts_block(b: Bundle) -> str:
    lines = [f"# >>> courseops {b.title}{_span(b)}"]
    lines += [f"{p.external_ip}\t{p.node}\t# rank {p.rank}, {p.group}" for p in b.participants]
    lines.append(f"# <<< courseops {b.title}")
    return "\n".join(lines) + "\n"


def ssh_config(
    b: Bundle,
    *,
    user: str = "YOUR_USERNAME",
    identity: str = "~/.ssh/id_ed25519",
    users: dict[str, str] | None = None,
) -> str:
    """An SSH config with a block per node; `users` (node → login name) where the name differs
    by node (OS Login on some of a window's nodes only), `user` for the rest."""
    users = users or {}
    blocks = [f"# courseops {b.title}{_span(b)}"]
    blocks += [
        f"Host {p.node}\n    HostName {p.external_ip}\n    User {users.get(p.node, user)}\n"
        f"    IdentityFile {identity}\n    ServerAliveInterval 60"
        for p in b.participants
    ]
    return "\n\n".join(blocks) + "\n"


def launch_env(b: Bundle) -> dict[str, dict[str, str]]:
    """Per node: the torchrun rendezvous variables. Rank 0 (the requester's node) is master."""
    master = min(b.participants, key=lambda p: p.rank)
    return {
        p.node: {
            "MASTER_ADDR": master.external_ip,
            "MASTER_PORT": str(b.master_port),
            "NNODES": str(len(b.participants)),
            "NODE_RANK": str(p.rank),
            "NPROC_PER_NODE": str(p.gpus),
        }
        for p in b.participants
    }


def launch_script(b: Bundle) -> str:
    out = [f"# courseops {b.title}{_span(b)}: run the block for your node on that node."]
    for node, env in launch_env(b).items():
        out.append(f"\n# --- on {node} ---")
        out += [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
        out.append(
            'torchrun --nnodes="$NNODES" --node_rank="$NODE_RANK" '
            '--nproc_per_node="$NPROC_PER_NODE" \\\n'
            '  --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" train.py'
        )
    return "\n".join(out) + "\n"


def firewall_rule_name(b: Bundle) -> str:
    return f"courseops-{b.slug}"[:62].rstrip("-")


def firewall_target_tag(b: Bundle) -> str:
    """The network tag the window's nodes carry while it is open (RFC 1035: a-z, 0-9, -)."""
    tag = re.sub(r"[^a-z0-9-]", "-", firewall_rule_name(b).lower())
    return tag[:63].rstrip("-")


def firewall_sources(b: Bundle) -> list[str]:
    """External /32s in rank order, then the internal /32s (each address once)."""
    ranked = sorted(b.participants, key=lambda p: p.rank)
    out = [f"{p.external_ip}/32" for p in ranked if p.external_ip]
    out += [f"{p.internal_ip}/32" for p in ranked if p.internal_ip]
    return list(dict.fromkeys(out))


def firewall_ports(b: Bundle) -> list[str]:
    """SSH and torchrun's rendezvous range (the master port and the 100 above it)."""
    return ["22", f"{b.master_port}-{b.master_port + 100}"]


def firewall_command(b: Bundle) -> str:
    sources = ",".join(firewall_sources(b))
    lo, hi = b.master_port, b.master_port + 100
    name = firewall_rule_name(b)
    cmd = [
        "gcloud",
        "compute",
        "firewall-rules",
        "create",
        name,
        f"--project={b.gcp_project}",
        "--direction=INGRESS",
        "--action=ALLOW",
        f"--rules=tcp:22,tcp:{lo}-{hi}",
        f"--source-ranges={sources}",
        f"--target-tags={firewall_target_tag(b)}",
        f"--description=courseops {b.title}{_span(b)}",
    ]
    text = " \\\n  ".join(shlex.quote(part) if " " in part or "–" in part else part for part in cmd)
    tag_cmds = "".join(
        f"gcloud compute instances add-tags {p.node} --tags={firewall_target_tag(b)} "
        f"--project={b.gcp_project}\n"
        for p in sorted(b.participants, key=lambda p: p.rank)
    )
    return (
        "# Allow the window's nodes to reach each other (SSH + rendezvous ports), over their\n"
        "# external and internal addresses; the rule applies only to nodes tagged for it.\n"
        f"{text}\n{tag_cmds}"
    ) + (
        f"# When the window ends: gcloud compute firewall-rules delete {name} "
        f"--project={b.gcp_project} --quiet\n"
    )
