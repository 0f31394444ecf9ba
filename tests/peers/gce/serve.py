"""A local Compute Engine for the tests: the v1 REST paths courseops's provider uses, served on
loopback to the real `google-cloud-compute` client (REST transport, anonymous credentials).

It keeps one project in memory: instances (metadata with fingerprints, nic0 access configs,
power), static addresses and firewall rules, and zone/global operations the client polls.
Faults are injected per call name with POST /_faults, e.g. {"setMetadata": [412, 503],
"addAccessConfig": ["timeout"], "insert": ["quota"]}: each entry is used once, in order. A
"timeout" answers only after the client gave up (the change is still made, as a real cloud
may); "slow" keeps the operation RUNNING for a few polls. GET /_state shows everything.

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

from tests.peers.gce import project_routes

LOCK = threading.Lock()
STATE: dict[str, Any] = {"project": "", "instances": {}, "addresses": {}, "firewalls": {}}
OPS: dict[str, dict[str, Any]] = {}
FAULTS: dict[str, list[Any]] = {}
CALLS: list[str] = []
SEQ = itertools.count(1)
TIMEOUT_SLEEP_S = 4.0
BASE = ""


def _fp(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True).encode() + str(next(SEQ)).encode()
    ).hexdigest()[:16]


def seed(doc: dict[str, Any]) -> None:
    with LOCK:
        STATE.update({"project": doc["project"], "instances": {}, "addresses": {}, "firewalls": {}})
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


class Fail(Exception):
    def __init__(self, code: int, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


def _operation(
    kind: str, scope: tuple[str, str], slow: bool = False, error: Fail | None = None
) -> dict[str, Any]:
    name = f"operation-{next(SEQ)}"
    op: dict[str, Any] = {
        "kind": "compute#operation",
        "id": str(next(SEQ)),
        "name": name,
        "operationType": kind,
        "status": "RUNNING" if slow else "DONE",
        "selfLink": _link(*scope, "operations", name),
        "_polls_left": 2 if slow else 0,
    }
    if scope[0] == "zones":
        op["zone"] = _link("zones", scope[1])
    if error is not None:
        op["error"] = {"errors": [{"code": error.reason or "ERROR", "message": error.message}]}
        op["httpErrorStatusCode"] = error.code
        op["httpErrorMessage"] = {403: "FORBIDDEN", 400: "BAD REQUEST"}.get(error.code, "ERROR")
    OPS[name] = op
    return op


def _public(op: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in op.items() if not k.startswith("_")}


def _fault(call: str) -> Any:
    queue = FAULTS.get(call) or []
    return queue.pop(0) if queue else None


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

    def _error(self, code: int, message: str, reason: str = "") -> None:
        self._send(
            code,
            {
                "error": {
                    "code": code,
                    "message": message,
                    "errors": [
                        {"domain": "global", "reason": reason or "error", "message": message}
                    ],
                }
            },
        )

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
        body = self._body() if method == "POST" else {}
        if project_routes.handle(self, method, path, query, body, STATE, LOCK):
            return None  # the project-level reads compute_preflight makes
        if path == "/ready":
            return self._send(200, {"ok": True})
        if path == "/_seed":
            seed(body)
            return self._send(200, {"ok": True})
        if path == "/_faults":
            with LOCK:
                for k, v in body.items():
                    FAULTS.setdefault(k, []).extend(v)
            return self._send(200, FAULTS)
        if path == "/_state":
            with LOCK:
                return self._send(200, {**STATE, "calls": CALLS, "faults": FAULTS})
        if path == "/_set":  # change the project behind courseops's back (drift, new nodes)
            with LOCK:
                for name, change in body.get("instances", {}).items():
                    if change is None:
                        STATE["instances"].pop(name, None)
                    else:
                        STATE["instances"][name].update(change)
            return self._send(200, {"ok": True})
        m = re.match(r"^/compute/v1/projects/([^/]+)/(.*)$", path)
        if not m:
            return self._error(404, f"no such path {path}")
        if m.group(1) != STATE["project"]:
            return self._error(
                404, f"The resource 'projects/{m.group(1)}' was not found", "notFound"
            )
        rest = m.group(2)
        call = self._call_name(method, rest)
        fault = None
        with LOCK:
            fault = _fault(call)
            CALLS.append(f"{method} {rest}" + (f" [{fault}]" if fault else ""))
        if fault == "timeout":
            time.sleep(TIMEOUT_SLEEP_S)
        elif isinstance(fault, int):
            messages = {
                412: "Supplied fingerprint does not match current metadata fingerprint.",
                429: "Rate Limit Exceeded",
                500: "Internal error",
                503: "Service unavailable",
                403: "Required 'compute.instances.setMetadata' permission",
            }
            reasons = {412: "conditionNotMet", 429: "rateLimitExceeded", 403: "forbidden"}
            return self._error(
                fault, messages.get(fault, "error"), reasons.get(fault, "backendError")
            )
        try:
            with LOCK:
                code, out = self._handle(method, rest, query, body, fault)
        except Fail as exc:
            return self._error(exc.code, exc.message, exc.reason)
        return self._send(code, out)

    @staticmethod
    def _call_name(method: str, rest: str) -> str:
        if rest.startswith("aggregated/"):
            return "aggregatedList"
        if rest.endswith(
            tuple(
                f"/{v}"
                for v in ("setMetadata", "addAccessConfig", "deleteAccessConfig", "start", "stop")
            )
        ):
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
        if rest == "aggregated/instances":
            items: dict[str, Any] = {}
            for i in STATE["instances"].values():
                items.setdefault(f"zones/{i['zone']}", {"instances": []})["instances"].append(
                    _instance_json(i)
                )
            return 200, {"kind": "compute#instanceAggregatedList", "items": items}
        if rest == "aggregated/addresses":
            items = {}
            for a in STATE["addresses"].values():
                items.setdefault(f"regions/{a['region']}", {"addresses": []})["addresses"].append(
                    _address_json(a)
                )
            return 200, {"kind": "compute#addressAggregatedList", "items": items}
        if parts[0] == "zones" and len(parts) == 4 and parts[2] == "operations":
            return 200, _public(self._poll(parts[3]))
        if parts[0] == "global" and parts[1] == "operations":
            return 200, _public(self._poll(parts[2]))
        if rest == "global/firewalls" and method == "GET":
            return 200, {
                "kind": "compute#firewallList",
                "items": [_firewall_json(f) for f in STATE["firewalls"].values()],
            }
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
            STATE["firewalls"][name] = {
                "name": name,
                "network": body.get("network", ""),
                "direction": body.get("direction", "INGRESS"),
                "sourceRanges": body.get("sourceRanges", []),
                "allowed": body.get("allowed", []),
                "description": body.get("description", ""),
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
        if parts[0] == "zones" and parts[2] == "instances":
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
            elif verb == "start":
                inst["status"] = "RUNNING"
            elif verb == "stop":
                inst["status"] = "TERMINATED"
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
            if op["_polls_left"] == 0:
                op["status"] = "DONE"
        return op


def main() -> None:
    global BASE
    port = int(sys.argv[1])
    BASE = f"http://127.0.0.1:{port}"
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
