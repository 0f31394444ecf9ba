"""Register an LMS (an LTI 1.3 platform) with courseops, or update its registration.

    manage.py lti_platform --issuer https://canvas.instructure.com --client-id 10000000000001 \\
        --login-url https://sso.canvaslms.com/api/lti/authorize_redirect \\
        --token-url https://sso.canvaslms.com/login/oauth2/token \\
        --jwks-url https://sso.canvaslms.com/api/lti/security/jwks --deployment 1:abc…

The tool's key pair is made on first use; its public half is served at /lti/jwks/.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from pylti1p3.contrib.django.lti1p3_tool_config.models import LtiTool

from apps.lti.keys import tool_key


class Command(BaseCommand):
    help = "Register (or update) an LTI 1.3 platform: issuer, client id, endpoints, deployments."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--title", default="LMS")
        parser.add_argument("--issuer", required=True)
        parser.add_argument("--client-id", required=True)
        parser.add_argument("--login-url", required=True, help="The platform's OIDC auth URL.")
        parser.add_argument("--token-url", required=True, help="Its OAuth2 token URL.")
        parser.add_argument("--jwks-url", required=True, help="Its public keys (JWKS).")
        parser.add_argument(
            "--deployment", action="append", required=True, help="A deployment id (repeatable)."
        )

    def handle(self, *args: Any, **o: Any) -> None:
        with transaction.atomic():
            tool, made = LtiTool.objects.update_or_create(
                issuer=o["issuer"],
                client_id=o["client_id"],
                defaults={
                    "title": o["title"],
                    "auth_login_url": o["login_url"],
                    "auth_token_url": o["token_url"],
                    "key_set_url": o["jwks_url"],
                    "deployment_ids": json.dumps(o["deployment"]),
                    "tool_key": tool_key(),
                    "is_active": True,
                },
            )
        self.stdout.write(
            f"{'Registered' if made else 'Updated'} {tool.title}: {tool.issuer} "
            f"(client {tool.client_id}, {len(o['deployment'])} deployment(s))."
        )
