"""A local Compute Engine for the tests: the v1 REST paths courseops's provider uses, served on
loopback to the real `google-cloud-compute` client (REST transport, anonymous credentials).

It keeps one project in memory: instances (metadata with fingerprints, nic0 access configs,
power), static addresses and firewall rules, and zone/global operations the client polls.
Faults are injected per call name with POST /_faults, e.g. {"setMetadata": [412, 503],
"addAccessConfig": ["timeout"], "insert": ["quota"]}: each entry is used once, in order. A
"timeout" makes the change when the call arrives and answers only after the client gave up, as
a lost or slow answer of a real cloud would: the operation exists from the request on, so a
retry reads the change, and nothing lands seconds later behind the client's back; "slow" keeps
the operation RUNNING for a few polls; "rateLimitExceeded" and 429 are
Compute Engine's rate-quota answers (https://cloud.google.com/compute/api-quota: "If your
project exceeds a rate quota, you receive a 403 error with the reason rateLimitExceeded … wait a
minute then try your request again"). GET /_state shows everything, with who can log in to
each instance and which instances each firewall rule reaches; POST /_timing sets how long power
changes take.

Every request body is parsed with the client library's own message types (validate.py); the
documented rules live beside it: pagination (pages.py), power states and Local SSDs
(lifecycle.py), OS Login and instance IAM (oslogin.py), firewall targets (policies.py), the
organisation policies a project inherits (orgpolicy.py, read by compute_preflight).

Run: python -m tests.peers.gce.serve PORT
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from google.cloud import compute_v1

from tests.peers.gce import lifecycle, oslogin, pages, policies, project_routes
from tests.peers.gce.validate import Fail, error_body, parse

LOCK = threading.Lock()
STATE: dict[str, Any] = {
    "project": "",
    "project_metadata": {"items": [], "fingerprint": ""},
    "org_policies": [],
    "org_policy_exceptions": [],
    "instances": {},
    "addresses": {},
    "firewalls": {},
}
OPS: dict[str, dict[str, Any]] = {}
FAULTS: dict[str, list[Any]] = {}
CALLS: list[str] = []
SEQ = itertools.count(1)
TIMEOUT_SLEEP_S = 4.0
EPOCH = [0]  # one more at each seed: a late "timeout" answer of an earlier project changes nothing
BASE = ""
INITIAL_DELAYS = dict(lifecycle.DELAYS)


def _fp(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True).encode() + str(next(SEQ)).encode()
    ).hexdigest()[:16]


def reset() -> None:
    """Back to the state the process started in: one peer serves a pytest worker's tests one
    after another (starting one costs seconds of importing the client library's types), and each
    test begins with an empty project, no faults, no calls and the default timings."""
    seed({"project": ""})
    with LOCK:
        lifecycle.DELAYS.clear()
        lifecycle.DELAYS.update(INITIAL_DELAYS)
    project_routes.reset()


def seed(doc: dict[str, Any]) -> None:
    with LOCK:
        EPOCH[0] += 1
        STATE.update(
            {
                "project": doc["project"],
                "project_metadata": {
                    "items": doc.get("project_metadata", []),
                    "fingerprint": _fp(doc["project"]),
                },
                "org_policies": list(doc.get("org_policies", [])),
                "org_policy_exceptions": list(doc.get("org_policy_exceptions", [])),
                "instances": {},
                "addresses": {},
                "firewalls": {},
            }
        )
        OPS.clear()
        FAULTS.clear()
        CALLS.clear()
        for i in doc.get("instances", []):
            STATE["instances"][i["name"]] = {
                "name": i["name"],
                "zone": i["zone"],
                "machine_type": i.get("machine_type", "a3-highgpu-8g"),
                "gpu": i.get("gpu", "nvidia-h100-80gb"),
                "gpus": i.get("gpus", 8),
                "status": i.get("status", "RUNNING"),
                "internal_ip": i["internal_ip"],
                "access": None,  # {"name", "natIP"}
                "metadata": {"items": i.get("metadata", []), "fingerprint": _fp(i["name"])},
                "labels": i.get("labels", {}),
                "tags": {"items": i.get("tags", []), "fingerprint": _fp(i.get("tags", []))},
                "local_ssds": i.get(
                    "local_ssds",
                    lifecycle.BUNDLED_LOCAL_SSDS.get(i.get("machine_type", "a3-highgpu-8g"), 0),
                ),
                "ssd_data": i.get("ssd_data", "scratch"),  # what a group left on its Local SSDs
                "ssd_saved": False,
                "iam": {"bindings": i.get("iam_bindings", []), "version": 1},
            }
        for a in doc.get("addresses", []):
            STATE["addresses"][a["name"]] = {
                "name": a["name"],
                "region": a["region"],
                "address": a["address"],
                "user": "",
            }


def _link(*parts: str) -> str:
    return f"{BASE}/compute/v1/projects/{STATE['project']}/" + "/".join(parts)


def _instance_json(i: dict[str, Any]) -> dict[str, Any]:
    nic: dict[str, Any] = {"name": "nic0", "networkIP": i["internal_ip"]}
    if i["access"]:
        nic["accessConfigs"] = [
            {"name": i["access"]["name"], "natIP": i["access"]["natIP"], "type": "ONE_TO_ONE_NAT"}
        ]
    return {
        "kind": "compute#instance",
        "name": i["name"],
        "zone": _link("zones", i["zone"]),
        "machineType": _link("zones", i["zone"], "machineTypes", i["machine_type"]),
        "status": i["status"],
        "networkInterfaces": [nic],
        "guestAccelerators": [
            {
                "acceleratorType": _link("zones", i["zone"], "acceleratorTypes", i["gpu"]),
                "acceleratorCount": i["gpus"],
            }
        ],
        "metadata": {"kind": "compute#metadata", **i["metadata"]},
        "labels": i["labels"],
        "tags": i["tags"],
        "disks": lifecycle.disks_json(i),
    }


def _address_json(a: dict[str, Any]) -> dict[str, Any]:
    out = {
        "kind": "compute#address",
        "name": a["name"],
        "address": a["address"],
        "region": _link("regions", a["region"]),
        "status": "IN_USE" if a["user"] else "RESERVED",
        "addressType": "EXTERNAL",
    }
    if a["user"]:
        inst = STATE["instances"].get(a["user"])
        out["users"] = [_link("zones", inst["zone"] if inst else "?", "instances", a["user"])]
    return out


def _firewall_json(f: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "compute#firewall", **f}


def _operation(
    kind: str,
    scope: tuple[str, str],
    slow: bool = False,
    error: Fail | None = None,
    delay: float = 0.0,
    effect: lifecycle.Effect | None = None,
) -> dict[str, Any]:
    """A zone or global operation. It is DONE once `delay` has passed (then `effect` runs) and,
    for a "slow" fault, after a few more polls."""
    name = f"operation-{next(SEQ)}"
    pending = slow or delay > 0
    op: dict[str, Any] = {
        "kind": "compute#operation",
        "id": str(next(SEQ)),
        "name": name,
        "operationType": kind,
        "status": "RUNNING" if pending else "DONE",
        "selfLink": _link(*scope, "operations", name),
        "_polls_left": 2 if slow else 0,
        "_done_at": time.monotonic() + delay,
        "_effect": effect,
    }
    if scope[0] == "zones":
        op["zone"] = _link("zones", scope[1])
    if error is not None:
        op["error"] = {"errors": [{"code": error.reason or "ERROR", "message": error.message}]}
        op["httpErrorStatusCode"] = error.code
        op["httpErrorMessage"] = {403: "FORBIDDEN", 400: "BAD REQUEST"}.get(error.code, "ERROR")
    OPS[name] = op
    if not pending and effect is not None:
        effect()
        op["_effect"] = None
    return op


def _tick() -> None:
    """Finish every operation whose time has come (whether or not anyone polls it)."""
    now = time.monotonic()
    for op in OPS.values():
        if op["_effect"] is not None and op["_done_at"] <= now:
            op["_effect"]()
            op["_effect"] = None
        if op["status"] == "RUNNING" and op["_done_at"] <= now and op["_polls_left"] == 0:
            op["status"] = "DONE"


def _public(op: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in op.items() if not k.startswith("_")}


def _fault(call: str) -> Any:
    queue = FAULTS.get(call) or []
    return queue.pop(0) if queue else None


# Injected answers, as Compute Engine words them. Rate quotas: https://cloud.google.com/compute/
# api-quota ("If your project exceeds a rate quota, you receive a 403 error with the reason
# rateLimitExceeded"); 429 with the same reason is how Google APIs answer when a request rate is
# exceeded at the front end (https://cloud.google.com/apis/design/errors#error_model,
# RESOURCE_EXHAUSTED ↔ 429).
FAULT_ANSWERS: dict[Any, tuple[int, str, str]] = {
    412: (
        412,
        "Supplied fingerprint does not match current metadata fingerprint.",
        "conditionNotMet",
    ),
    429: (429, "Too Many Requests: rate limit exceeded, retry later.", "rateLimitExceeded"),
    500: (500, "Internal error", "backendError"),
    503: (503, "Service unavailable", "backendError"),
    403: (403, "Required 'compute.instances.setMetadata' permission", "forbidden"),
    "rateLimitExceeded": (
        403,
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service "
        "'compute.googleapis.com'.",
        "rateLimitExceeded",
    ),
}

# Request bodies and the client library type each must parse as (the REST field it fills).
BODIES: dict[str, tuple[Any, str]] = {
    "setMetadata": (compute_v1.Metadata, "metadata_resource"),
    "addAccessConfig": (compute_v1.AccessConfig, "access_config_resource"),
    "setTags": (compute_v1.Tags, "tags_resource"),
    "setIamPolicy": (compute_v1.ZoneSetPolicyRequest, "zone_set_policy_request_resource"),
    "insert": (compute_v1.Firewall, "firewall_resource"),
}
VERBS = (
    "setMetadata",
    "addAccessConfig",
    "deleteAccessConfig",
    "setTags",
    "getIamPolicy",
    "setIamPolicy",
    "start",
    "stop",
    "suspend",
    "resume",
)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:
        pass

    def _send(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code: int, message: str, reason: str = "", status: str = "") -> None:
        self._send(code, error_body(code, message, reason, status))

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}") if n else {}

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_DELETE(self) -> None:
        self._route("DELETE")

    def _route(self, method: str) -> None:
        url = urlparse(self.path)
        path, query = url.path, parse_qs(url.query)
        try:
            body = self._body() if method == "POST" else {}
        except json.JSONDecodeError:
            return self._error(400, "Invalid JSON payload received.", "parseError")
        if project_routes.handle(self, method, path, query, body, STATE, LOCK):
            return None  # the project-level reads compute_preflight makes
        if path == "/ready":
            return self._send(200, {"ok": True})
        if path == "/_reset":
            reset()
            return self._send(200, {"ok": True})
        if path == "/_seed":
            seed(body)
            return self._send(200, {"ok": True})
        if path == "/_faults":
            with LOCK:
                for k, v in body.items():
                    FAULTS.setdefault(k, []).extend(v)
            return self._send(200, FAULTS)
        if path == "/_timing":
            with LOCK:
                lifecycle.DELAYS.update({k: float(v) for k, v in body.items()})
            return self._send(200, lifecycle.DELAYS)
        if path == "/_state":
            with LOCK:
                _tick()
                return self._send(200, _state())
        if path == "/_set":  # change the project behind courseops's back (drift, new nodes)
            with LOCK:
                for name, change in body.get("instances", {}).items():
                    if change is None:
                        STATE["instances"].pop(name, None)
                    else:
                        STATE["instances"][name].update(change)
                if "project_metadata" in body:
                    STATE["project_metadata"] = {
                        "items": body["project_metadata"],
                        "fingerprint": _fp(body["project_metadata"]),
                    }
                for key in ("org_policies", "org_policy_exceptions"):
                    if key in body:
                        STATE[key] = list(body[key])
            return self._send(200, {"ok": True})
        m = re.match(r"^/compute/v1/projects/([^/]+)(?:/(.*))?$", path)
        if not m:
            return self._error(404, f"no such path {path}")
        if m.group(1) != STATE["project"]:
            return self._error(
                404, f"The resource 'projects/{m.group(1)}' was not found", "notFound"
            )
        rest = m.group(2) or ""
        call = self._call_name(method, rest)
        fault = None
        with LOCK:
            fault = _fault(call)
            CALLS.append(
                f"{method} {rest}"
                + (f"?{url.query}" if url.query else "")
                + (f" [{fault}]" if fault else "")
            )
        if fault in FAULT_ANSWERS:
            return self._error(*FAULT_ANSWERS[fault])
        if isinstance(fault, int):
            return self._error(fault, "error", "backendError")
        try:
            with LOCK:
                _tick()
                if call in BODIES and method == "POST":
                    cls, where = BODIES[call]
                    parse(cls, body, where)
                code, out = self._handle(method, rest, query, body, fault)
        except Fail as exc:
            code, out = exc.code, exc
        if fault == "timeout":  # the change is made; the answer comes after the client gave up
            epoch = EPOCH[0]
            time.sleep(TIMEOUT_SLEEP_S)
            if epoch != EPOCH[0]:  # the project was seeded anew meanwhile (the next test's)
                return self._error(503, "the project this call was for is gone", "backendError")
        if isinstance(out, Fail):
            return self._error(out.code, out.message, out.reason, out.status)
        return self._send(code, out)

    @staticmethod
    def _call_name(method: str, rest: str) -> str:
        if rest == "":
            return "projects.get"
        if rest.startswith("aggregated/"):
            return "aggregatedList"
        if rest.endswith(tuple(f"/{v}" for v in VERBS)):
            return rest.rsplit("/", 1)[1]
        if "/operations/" in rest:
            return "operations.get"
        if rest.startswith("global/firewalls"):
            return {"GET": "firewalls.list", "POST": "insert", "DELETE": "delete"}[method]
        return "instances.get"

    def _handle(
        self, method: str, rest: str, query: dict[str, list[str]], body: Any, fault: Any
    ) -> tuple[int, Any]:
        parts = rest.split("/")
        slow = fault == "slow"
        if rest == "" and method == "GET":
            return 200, {
                "kind": "compute#project",
                "name": STATE["project"],
                "commonInstanceMetadata": {
                    "kind": "compute#metadata",
                    **STATE["project_metadata"],
                },
            }
        if rest == "aggregated/instances":
            scoped = [
                (f"zones/{i['zone']}", _instance_json(i))
                for _, i in sorted(STATE["instances"].items())
            ]
            return 200, pages.aggregated_page(
                "compute#instanceAggregatedList", "instances", scoped, query
            )
        if rest == "aggregated/addresses":
            scoped = [
                (f"regions/{a['region']}", _address_json(a))
                for _, a in sorted(STATE["addresses"].items())
            ]
            return 200, pages.aggregated_page(
                "compute#addressAggregatedList", "addresses", scoped, query
            )
        if parts[0] == "zones" and len(parts) == 4 and parts[2] == "operations":
            return 200, _public(self._poll(parts[3]))
        if parts[0] == "global" and parts[1] == "operations":
            return 200, _public(self._poll(parts[2]))
        if rest == "global/firewalls" and method == "GET":
            return 200, pages.page(
                "compute#firewallList",
                [_firewall_json(f) for _, f in sorted(STATE["firewalls"].items())],
                query,
            )
        if rest == "global/firewalls" and method == "POST":
            if fault == "quota":
                return 200, _public(
                    _operation(
                        "insert",
                        ("global", ""),
                        error=Fail(
                            403,
                            "Quota 'FIREWALLS' exceeded. Limit: 0.0 globally.",
                            "QUOTA_EXCEEDED",
                        ),
                    )
                )
            name = body["name"]
            if name in STATE["firewalls"]:
                raise Fail(
                    409,
                    f"The resource 'projects/{STATE['project']}/global/firewalls/{name}' already exists",
                    "alreadyExists",
                )
            policies.check_firewall_insert(STATE, body)
            STATE["firewalls"][name] = {
                "name": name,
                "network": body.get("network", ""),
                "direction": body.get("direction", "INGRESS"),
                "sourceRanges": body.get("sourceRanges", []),
                "allowed": body.get("allowed", []),
                "description": body.get("description", ""),
                "targetTags": body.get("targetTags", []),
                "targetServiceAccounts": body.get("targetServiceAccounts", []),
            }
            return 200, _public(_operation("insert", ("global", ""), slow))
        if parts[:2] == ["global", "firewalls"] and method == "DELETE":
            if STATE["firewalls"].pop(parts[2], None) is None:
                raise Fail(
                    404,
                    f"The resource 'projects/{STATE['project']}/global/firewalls/{parts[2]}' was not found",
                    "notFound",
                )
            return 200, _public(_operation("delete", ("global", ""), slow))
        if parts[0] == "zones" and len(parts) >= 4 and parts[2] == "instances":
            zone, name = parts[1], parts[3]
            inst = STATE["instances"].get(name)
            if inst is None or inst["zone"] != zone:
                raise Fail(
                    404,
                    f"The resource 'projects/{STATE['project']}/zones/{zone}/instances/{name}' was not found",
                    "notFound",
                )
            verb = parts[4] if len(parts) > 4 else ""
            if verb == "" and method == "GET":
                return 200, _instance_json(inst)
            if verb == "getIamPolicy":
                return 200, oslogin.policy_json(inst)
            if verb == "setIamPolicy":
                return 200, oslogin.set_policy(inst, body.get("policy", {}))
            if fault == "quota":
                return 200, _public(
                    _operation(
                        verb, ("zones", zone), error=Fail(403, "Quota exceeded", "QUOTA_EXCEEDED")
                    )
                )
            if verb == "setMetadata":
                if body.get("fingerprint") != inst["metadata"]["fingerprint"]:
                    raise Fail(
                        412,
                        "Supplied fingerprint does not match current metadata fingerprint.",
                        "conditionNotMet",
                    )
                items = body.get("items", [])
                inst["metadata"] = {"items": items, "fingerprint": _fp(items)}
            elif verb == "setTags":
                # https://cloud.google.com/compute/docs/reference/rest/v1/instances/setTags:
                # the tags' fingerprint must be quoted, like metadata's.
                if body.get("fingerprint") != inst["tags"]["fingerprint"]:
                    raise Fail(
                        412,
                        "Supplied fingerprint does not match current tags fingerprint.",
                        "conditionNotMet",
                    )
                items = body.get("items", [])
                inst["tags"] = {"items": items, "fingerprint": _fp(items)}
            elif verb == "addAccessConfig":
                if inst["access"]:
                    raise Fail(400, "At most one access config currently supported.", "invalid")
                nat = body.get("natIP")
                owner = next((a for a in STATE["addresses"].values() if a["address"] == nat), None)
                if nat and owner is None:
                    raise Fail(
                        400,
                        f"Invalid value for field 'natIP': '{nat}'. Address is not reserved.",
                        "invalid",
                    )
                if owner is not None and owner["user"] and owner["user"] != name:
                    raise Fail(
                        400,
                        f"The IP address '{nat}' is already in use by another resource.",
                        "resourceInUseByAnotherResource",
                    )
                inst["access"] = {
                    "name": body.get("name", "External NAT"),
                    "natIP": nat or "34.0.0.1",
                }
                if owner is not None:
                    owner["user"] = name
            elif verb == "deleteAccessConfig":
                wanted = query.get("accessConfig", [""])[0]
                if not inst["access"] or inst["access"]["name"] != wanted:
                    raise Fail(400, f"No access config named '{wanted}'.", "invalid")
                for a in STATE["addresses"].values():
                    if a["user"] == name:
                        a["user"] = ""
                inst["access"] = None
            elif verb in ("start", "stop", "suspend", "resume"):
                delay, effect = lifecycle.change(verb, inst, query)
                return 200, _public(
                    _operation(verb, ("zones", zone), slow, delay=delay, effect=effect)
                )
            else:
                raise Fail(404, f"no such method {verb}")
            return 200, _public(_operation(verb, ("zones", zone), slow))
        raise Fail(404, f"no such path {rest}")

    @staticmethod
    def _poll(name: str) -> dict[str, Any]:
        op = OPS.get(name)
        if op is None:
            raise Fail(404, f"operation {name} not found", "notFound")
        if op["_polls_left"] > 0:
            op["_polls_left"] -= 1
        if op["_polls_left"] == 0 and op["_done_at"] <= time.monotonic():
            op["status"] = "DONE"
        return op


def _state() -> dict[str, Any]:
    """Everything, plus what the documented rules make of it: who can log in to each instance
    and which instances each firewall rule reaches."""
    instances = {
        name: {
            **i,
            "os_login": oslogin.enabled(STATE, i),
            "logins": oslogin.who_can_log_in(STATE, i),
        }
        for name, i in STATE["instances"].items()
    }
    firewalls = {
        name: {**f, "reach": policies.reach(f, STATE["instances"])}
        for name, f in STATE["firewalls"].items()
    }
    return {
        **STATE,
        "instances": instances,
        "firewalls": firewalls,
        "calls": CALLS,
        "faults": {k: [str(x) for x in v] for k, v in FAULTS.items()},
    }


def main() -> None:
    global BASE
    port = int(sys.argv[1])
    BASE = f"http://127.0.0.1:{port}"
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
