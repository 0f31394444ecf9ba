"""A real SAML 2.0 identity provider for the sign-on tests (pysaml2's Server), run as its own
process on loopback: `python -m tests.peers.saml_idp.serve PORT` with IDP_DIR (its key and
certificate, and the SP's metadata file) and IDP_PEOPLE (JSON [[user, password, mail, name]]).

  /metadata      → the IdP's metadata (what the SP trusts)
  /sso/redirect  → an AuthnRequest (HTTP-Redirect binding) → the log-in form
  /login (POST)  → a signed assertion POSTed to the SP's ACS (an auto-submitting form)
It sets no cookies: the pending request rides in the form.
"""

from __future__ import annotations

import html
import json
import os
import sys
import uuid
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
from saml2.metadata import entity_descriptor
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS, NAMEID_FORMAT_TRANSIENT, NameID
from saml2.server import Server

PENDING: dict[str, tuple[Any, str]] = {}


class Threaded(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def config(base: str, directory: str) -> IdPConfig:
    conf = IdPConfig()
    conf.load(
        {
            "entityid": f"{base}/metadata",
            "service": {
                "idp": {
                    "name": "Test campus IdP",
                    "endpoints": {
                        "single_sign_on_service": [(f"{base}/sso/redirect", BINDING_HTTP_REDIRECT)]
                    },
                    "name_id_format": [NAMEID_FORMAT_TRANSIENT, NAMEID_FORMAT_EMAILADDRESS],
                    "sign_response": True,
                    "sign_assertion": True,
                }
            },
            "key_file": os.path.join(directory, "idp.key"),
            "cert_file": os.path.join(directory, "idp.crt"),
            "metadata": {"local": [os.path.join(directory, "sp.xml")]},
            "xmlsec_binary": "/usr/bin/xmlsec1",
        }
    )
    return conf


def main() -> None:
    port = int(sys.argv[1])
    base = f"http://localhost:{port}"
    conf = config(base, os.environ["IDP_DIR"])
    idp = Server(config=conf)
    people = {u: (p, m, n) for u, p, m, n in json.loads(os.environ.get("IDP_PEOPLE", "[]"))}
    metadata = str(entity_descriptor(conf)).encode()

    def app(environ: dict[str, Any], start: Any) -> list[bytes]:
        path = environ["PATH_INFO"]
        if path == "/metadata":
            start("200 OK", [("Content-Type", "text/xml")])
            return [metadata]
        if path == "/sso/redirect":
            q = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
            request = idp.parse_authn_request(q["SAMLRequest"], BINDING_HTTP_REDIRECT)
            key = uuid.uuid4().hex
            PENDING[key] = (request.message, q.get("RelayState", ""))
            start("200 OK", [("Content-Type", "text/html")])
            return [
                (
                    "<!doctype html><html><body><h1>Campus sign-on (SAML test IdP)</h1>"
                    '<form method="post" action="/login">'
                    f'<input type="hidden" name="key" value="{key}">'
                    '<label for="u">Campus user</label><input id="u" name="username">'
                    '<label for="p">Password</label><input id="p" name="password" type="password">'
                    '<button type="submit">Sign on</button></form></body></html>'
                ).encode()
            ]
        if path == "/login":
            size = int(environ.get("CONTENT_LENGTH") or 0)
            form = {k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(size).decode()).items()}
            message, relay = PENDING.pop(form.get("key", ""), (None, ""))
            person = people.get(form.get("username", ""))
            if message is None or person is None or person[0] != form.get("password"):
                start("403 Forbidden", [("Content-Type", "text/plain")])
                return [b"wrong user or password"]
            args = idp.response_args(message)
            response = idp.create_authn_response(
                {"mail": [person[1]], "displayName": [person[2]], "uid": [form["username"]]},
                userid=form["username"],
                name_id=NameID(format=NAMEID_FORMAT_TRANSIENT, text=uuid.uuid4().hex),
                authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password"},
                sign_assertion=True,
                sign_response=True,
                **args,
            )
            http = idp.apply_binding(
                BINDING_HTTP_POST, str(response), args["destination"], relay, response=True
            )
            body = http["data"]
            start("200 OK", [("Content-Type", "text/html")])
            return [body.encode() if isinstance(body, str) else body]
        start("404 Not Found", [("Content-Type", "text/plain")])
        return [html.escape(path).encode()]

    with make_server("127.0.0.1", port, app, server_class=Threaded, handler_class=Quiet) as httpd:
        httpd.serve_forever()


if __name__ == "__main__":
    main()
