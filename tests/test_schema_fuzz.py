"""Schemathesis in CI: the project's own OpenAPI schema, fuzzed against the app in-process.

Every operation is tried with schema-valid data, logged in as a student and as an instructor,
with the course code and real object ids filled in for half the cases (random ids for the rest),
so requests reach the views' logic and not only their 404s. The build fails on any 5xx, any
response that does not match its documented schema or content type, and any status the schema
does not list for the operation. Bounded: FUZZ_EXAMPLES cases per operation and role.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from apps.core.models import ApiToken
from apps.core.tokens import digest, token_create
from tests.world import build_world

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
if os.environ.get("FUZZ_ACCEPTANCE"):  # also: data valid by the schema must not get a 400
    CHECKS.append(positive_data_acceptance)


def _schema() -> Any:
    generated = SchemaGenerator().get_schema(request=None, public=True)
    import json

    from rest_framework.renderers import JSONRenderer

    as_dict = json.loads(JSONRenderer().render(generated))
    schema = schemathesis.openapi.from_dict(as_dict)
    schema.app = WSGIHandler()  # type: ignore[attr-defined]
    return schema


@pytest.fixture
def keep_connection():  # type: ignore[no-untyped-def]
    """Like Django's test Client: the WSGI handler must not close the test's connection."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _fill(case: Any, ids: dict[str, Any]) -> None:
    """Real ids in half the cases (chosen by the generated value, so shrinking keeps it)."""
    for name, value in list((case.path_parameters or {}).items()):
        if name == "code":
            case.path_parameters[name] = ids["code"]
        elif name in ids and (not isinstance(value, int) or value % 2 == 0):
            real = (
                ids["lateness_import_id"]
                if name == "import_id" and "/slack/" in case.path
                else ids[name]
            )
            case.path_parameters[name] = real


@pytest.mark.postgres
@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize("role", ["student_a", "instructor"])
def test_fuzzing_the_api_finds_no_server_error_and_no_schema_mismatch(
    ee290_demo, keep_connection, role: str
) -> None:
    world = build_world(ee290_demo)
    user = world.people[role]
    schema = _schema()
    failures: list[str] = []
    statuses: Counter[int] = Counter()
    operations = 0
    key: list[str | None] = [None]  # the token in use; made again whenever a case revoked it
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def run(case: Any) -> None:
            _fill(case, world.ids)
            # DELETE /auth/token/ is one of the operations: log in again whenever it revoked us.
            if (
                key[0] is None
                or not ApiToken.objects.filter(
                    key_hash=digest(key[0]), revoked_at__isnull=True
                ).exists()
            ):
                key[0] = token_create(user=user, name="schemathesis")[1]
            headers = {"Authorization": f"Token {key[0]}"}
            # Each request in its own savepoint, as each has its own transaction in production.
            with transaction.atomic():
                response = case.call_and_validate(headers=headers, checks=CHECKS, app=schema.app)
            statuses[response.status_code] += 1

        try:
            run()
        except BaseException as exc:
            text = str(exc)
            kinds = sorted(
                {line.strip()[2:] for line in text.splitlines() if line.strip().startswith("- ST")}
            )
            failures.append(
                f"{operation.label}: {'; '.join(kinds) or type(exc).__name__}\n{text[:1200]}"
            )
    sys.stdout.write(
        f"\nfuzzed {operations} operations as {role}: {sum(statuses.values())} requests, statuses "
        f"{dict(sorted(statuses.items()))}"
    )
    assert operations > 80
    assert statuses[200] > 100
    summary = "\n".join(f.splitlines()[0] for f in failures)
    assert not failures, f"{len(failures)} operations failed:\n{summary}\n\n" + "\n\n".join(
        failures
    )
