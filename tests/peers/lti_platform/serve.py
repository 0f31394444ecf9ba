"""A real LTI 1.3 platform for the launch tests, run as its own process on loopback:
`python -m tests.peers.lti_platform.serve PORT` with TOOL_LOGIN, TOOL_LAUNCH and CLIENT_ID in
the environment.

It signs launch id_tokens (RS256) with its own key and serves its JWKS over HTTP, like Canvas:
  /start?email=&name=&role=&context=&title=[&sub=][&tamper=signature|expired|audience]
      (sub: the platform's user id; the e-mail, lower-cased, when not given)
      → the third-party login initiation (a redirect to the tool's login URL)
  /authorize?…  (the tool's redirect back) → an auto-submitting form POSTing id_token and state
  /replay       → the last launch form again (the same id_token and state)
  /jwks         → the platform's public keys
  /token        → client-credentials tokens, the tool's JWT assertion checked against its JWKS
  /nrps/<ctx>   → Names and Role Provisioning: the members in PLATFORM_ROSTER (a JSON file
                  {context: [member, …]}, read on every call), 15 a page with Link: next
  /ags/<ctx>/lineitems[/<n>[/scores]] → Assignment and Grade Services; a score for a user who is
                  not an active Learner of the context is refused like Canvas refuses it
  /_state       → what the platform holds (line items and scores), for the tests
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import os
import sys
import uuid
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs, urlencode
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # a forger's key
KID = "platform-1"
DEPLOYMENT = "deployment-1"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership"
ROLES = {
    "Instructor": [f"{LIS}#Instructor"],
    "TeachingAssistant": [f"{LIS}/Instructor#TeachingAssistant"],
    "Learner": [f"{LIS}#Learner"],
    "Mentor": [f"{LIS}#Mentor"],
    "Instructor+TeachingAssistant": [f"{LIS}#Instructor", f"{LIS}/Instructor#TeachingAssistant"],
}
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
LAST: dict[str, str] = {}
TOKENS: set[str] = set()
DEEP_LINKS: list[dict[str, Any]] = []  # what the tool sent back from deep linking
LINEITEMS: dict[str, list[dict[str, Any]]] = {}  # context → line items
SCORES: dict[str, dict[str, dict[str, Any]]] = {}  # line item id → user → last score
LOCK = __import__("threading").Lock()
PAGE = 15


class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def issuer() -> str:
    return os.environ["PLATFORM_ISSUER"]


def _form(action: str, fields: dict[str, str]) -> bytes:
    inputs = "".join(
        f'<input type="hidden" name="{k}" value="{html.escape(v)}">' for k, v in fields.items()
    )
    return (
        "<!doctype html><html><body><h1>Test LMS</h1>"
        f'<form id="launch" method="post" action="{html.escape(action)}">{inputs}'
        '<button type="submit">Continue to the tool</button></form>'
        "<script>document.getElementById('launch').submit()</script></body></html>"
    ).encode()


def _token(spec: dict[str, str], nonce: str, client_id: str) -> str:
    now = dt.datetime.now(dt.UTC)
    tamper = spec.get("tamper", "")
    claims = {
        "iss": issuer(),
        "aud": "someone-else" if tamper == "audience" else client_id,
        "sub": spec.get("sub") or spec["email"].strip().lower(),
        "iat": int(now.timestamp()) - (7200 if tamper == "expired" else 0),
        "exp": int((now + dt.timedelta(minutes=5)).timestamp())
        - (7200 if tamper == "expired" else 0),
        "nonce": nonce,
        "email": spec["email"],
        "name": spec.get("name", ""),
        CLAIM + "message_type": "LtiResourceLinkRequest",
        CLAIM + "version": "1.3.0",
        CLAIM + "deployment_id": DEPLOYMENT,
        CLAIM + "target_link_uri": os.environ["TOOL_LAUNCH"],
        CLAIM + "resource_link": {"id": "courseops-link"},
        CLAIM + "roles": ROLES[spec.get("role", "Learner")],
        CLAIM + "context": {"id": spec["context"], "title": spec.get("title", spec["context"])},
        "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
            "context_memberships_url": f"{issuer()}/nrps/{spec['context']}",
            "service_versions": ["2.0"],
        },
        "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
            "scope": [
                "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
            ],
            "lineitems": f"{issuer()}/ags/{spec['context']}/lineitems",
        },
    }
    if spec.get("message") == "deep":  # the instructor adds the tool: deep linking
        claims[CLAIM + "message_type"] = "LtiDeepLinkingRequest"
        del claims[CLAIM + "resource_link"]
        claims["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = {
            "deep_link_return_url": f"{issuer()}/deeplink/return",
            "accept_types": ["ltiResourceLink"],
            "accept_presentation_document_targets": ["window"],
            "data": "opaque-" + spec["context"],
        }
    key = OTHER if tamper == "signature" else KEY
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})


def _json(start: Any, status: str, body: Any, headers: list[tuple[str, str]] = ()) -> list[bytes]:  # type: ignore[assignment]
    start(status, [("Content-Type", "application/json"), *headers])
    return [json.dumps(body).encode()]


def _roster() -> dict[str, list[dict[str, Any]]]:
    path = os.environ.get("PLATFORM_ROSTER", "")
    return json.loads(open(path).read()) if path and os.path.exists(path) else {}


def _token_endpoint(environ: dict[str, Any], start: Any) -> list[bytes]:
    size = int(environ.get("CONTENT_LENGTH") or 0)
    form = {k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(size).decode()).items()}
    assertion = form.get("client_assertion", "")
    try:
        kid = jwt.get_unverified_header(assertion).get("kid")
        keys = jwt.PyJWKClient(os.environ["TOOL_JWKS"]).get_jwk_set().keys
        key = next(k for k in keys if k.key_id == kid)
        jwt.decode(assertion, key.key, algorithms=["RS256"], audience=f"{issuer()}/token")
    except Exception as exc:  # any failure is the tool's: say so like a platform does
        return _json(start, "401 Unauthorized", {"error": "invalid_client", "detail": str(exc)})
    token = uuid.uuid4().hex
    TOKENS.add(token)
    return _json(
        start,
        "200 OK",
        {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "scope": form.get("scope", ""),
        },
    )


def _authorized(environ: dict[str, Any]) -> bool:
    return environ.get("HTTP_AUTHORIZATION", "").removeprefix("Bearer ") in TOKENS


def _ags(environ: dict[str, Any], start: Any, parts: list[str], q: dict[str, str]) -> list[bytes]:
    context = parts[1]
    items = LINEITEMS.setdefault(context, [])
    method = environ["REQUEST_METHOD"]
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = json.loads(environ["wsgi.input"].read(size) or b"{}") if method == "POST" else {}
    base = f"{issuer()}/ags/{context}/lineitems"
    with LOCK:
        if len(parts) == 3 and method == "GET":
            found = [
                i
                for i in items
                if (not q.get("resource_id") or i.get("resourceId") == q["resource_id"])
                and (not q.get("tag") or i.get("tag") == q["tag"])
            ]
            return _json(start, "200 OK", found)
        if len(parts) == 3 and method == "POST":
            item = {**body, "id": f"{base}/{len(items) + 1}"}
            items.append(item)
            return _json(start, "201 Created", item)
        item = next((i for i in items if i["id"] == f"{base}/{parts[3]}"), None)
        if item is None:
            return _json(start, "404 Not Found", {"error": "no such line item"})
        if len(parts) == 4:
            return _json(start, "200 OK", item)
        learners = {
            m["user_id"]
            for m in _roster().get(context, [])
            if m.get("status", "Active") == "Active" and any("Learner" in r for r in m["roles"])
        }
        if body.get("userId") not in learners:
            return _json(
                start,
                "422 Unprocessable Entity",
                {"errors": {"message": "User not found in course or is not a student"}},
            )
        SCORES.setdefault(item["id"], {})[body["userId"]] = body
        return _json(start, "200 OK", {"resultUrl": f"{item['id']}/results/{body['userId']}"})


def app(environ: dict[str, Any], start: Any) -> list[bytes]:
    path = environ["PATH_INFO"]
    q = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
    parts = [p for p in path.split("/") if p]
    if path == "/token":
        return _token_endpoint(environ, start)
    if path == "/_state":
        with LOCK:
            return _json(
                start,
                "200 OK",
                {"lineitems": LINEITEMS, "scores": SCORES, "deep_links": DEEP_LINKS},
            )
    if path == "/deeplink/return":
        size = int(environ.get("CONTENT_LENGTH") or 0)
        form = {k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(size).decode()).items()}
        try:
            token = form["JWT"]
            kid = jwt.get_unverified_header(token).get("kid")
            keys = jwt.PyJWKClient(os.environ["TOOL_JWKS"]).get_jwk_set().keys
            key = next(k for k in keys if k.key_id == kid)
            body = jwt.decode(token, key.key, algorithms=["RS256"], audience=issuer())
        except Exception as exc:  # the tool's answer did not verify
            start("400 Bad Request", [("Content-Type", "text/plain")])
            return [f"deep link refused: {exc}".encode()]
        items = body["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
        with LOCK:
            DEEP_LINKS.extend(items)
        start("200 OK", [("Content-Type", "text/html")])
        titles = ", ".join(html.escape(i.get("title", "")) for i in items)
        return [
            f"<!doctype html><html><body><h1>Test LMS: added {titles}</h1></body></html>".encode()
        ]
    if parts[:1] in (["nrps"], ["ags"]) and not _authorized(environ):
        return _json(start, "401 Unauthorized", {"error": "no valid token"})
    if parts[:1] == ["nrps"] and len(parts) == 2:
        members = _roster().get(parts[1], [])
        first = int(q.get("from", "0"))
        headers = []
        if first + PAGE < len(members):
            headers = [("Link", f'<{issuer()}/nrps/{parts[1]}?from={first + PAGE}>; rel="next"')]
        return _json(
            start,
            "200 OK",
            {"id": path, "context": {"id": parts[1]}, "members": members[first : first + PAGE]},
            headers,
        )
    if parts[:1] == ["ags"] and len(parts) >= 3 and parts[2] == "lineitems":
        return _ags(environ, start, parts, q)
    if path == "/jwks":
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
        body = json.dumps({"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]}).encode()
        start("200 OK", [("Content-Type", "application/json")])
        return [body]
    if path == "/start":
        hint = base64.urlsafe_b64encode(json.dumps(q).encode()).decode()
        params = {
            "iss": issuer(),
            "login_hint": hint,
            "target_link_uri": os.environ["TOOL_LAUNCH"],
            "lti_message_hint": str(uuid.uuid4()),
            "client_id": os.environ["CLIENT_ID"],
            "lti_deployment_id": DEPLOYMENT,
        }
        start("302 Found", [("Location", os.environ["TOOL_LOGIN"] + "?" + urlencode(params))])
        return [b""]
    if path == "/authorize":
        spec = json.loads(base64.urlsafe_b64decode(q["login_hint"]))
        token = _token(spec, q["nonce"], q["client_id"])
        LAST.update(action=q["redirect_uri"], id_token=token, state=q["state"])
        start("200 OK", [("Content-Type", "text/html")])
        return [_form(q["redirect_uri"], {"id_token": token, "state": q["state"]})]
    if path == "/replay":
        start("200 OK", [("Content-Type", "text/html")])
        return [_form(LAST["action"], {"id_token": LAST["id_token"], "state": LAST["state"]})]
    if path == "/ready":
        start("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    start("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


def main() -> None:
    port = int(sys.argv[1])
    with make_server("127.0.0.1", port, app, server_class=Server, handler_class=Quiet) as httpd:
        httpd.serve_forever()


if __name__ == "__main__":
    main()
