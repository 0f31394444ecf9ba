"""Run the test OpenID provider: `python -m tests.peers.oidc_op.serve PORT REDIRECT_URI`.

Migrates its SQLite database, creates the client (id `courseops`, secret `op-secret`, the given
redirect URI) and the campus people from OP_PEOPLE (JSON: [[username, password, email, last]]),
then serves on 127.0.0.1:PORT until killed."""

from __future__ import annotations

import json
import os
import sys

os.environ["DJANGO_SETTINGS_MODULE"] = "tests.peers.oidc_op.settings"  # never the parent's


def main() -> None:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from oauth2_provider.models import get_application_model

    port, redirect_uri = sys.argv[1], sys.argv[2]
    call_command("migrate", verbosity=0, interactive=False)
    for username, password, email, last in json.loads(os.environ.get("OP_PEOPLE", "[]")):
        User.objects.create_user(username, email=email, password=password, last_name=last)
    get_application_model().objects.create(
        name="courseops",
        client_id="courseops",
        client_secret="op-secret",
        client_type="confidential",
        authorization_grant_type="authorization-code",
        redirect_uris=redirect_uri,
        algorithm="RS256",
        skip_authorization=True,
    )
    call_command("runserver", f"127.0.0.1:{port}", use_reloader=False, verbosity=0)


if __name__ == "__main__":
    main()
