"""A real LTI 1.3 platform for the launch tests, run as its own process on loopback:
`python -m tests.peers.lti_platform.serve PORT` with TOOL_LOGIN, TOOL_LAUNCH and CLIENT_ID in
the environment.

It signs launch id_tokens (RS256) with its own key and serves its JWKS over HTTP, like Canvas:
  /start?email=&name=&role=&context=&title=[&tamper=signature|expired|audience]
      → the third-party login initiation (a redirect to the tool's login URL)
  /authorize?…  (the tool's redirect back) → an auto-submitting form POSTing id_token and state
  /replay       → the last launch form again (the same id_token and state)
  /jwks         → the platform's public keys
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
}
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
LAST: dict[str, str] = {}


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
        "sub": spec["email"],
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
    }
    key = OTHER if tamper == "signature" else KEY
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})


def app(environ: dict[str, Any], start: Any) -> list[bytes]:
    path = environ["PATH_INFO"]
    q = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
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
