"""Faults on the real services: the database connection dropped in the middle of a request is a
503 with a JSON body and commits nothing. (The broker case: tests/autograder/test_passes.py; a
worker killed mid-grading: tests/autograder/test_workers.py.)"""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import AuditEvent, Role
from apps.groups import services as group_services
from apps.groups.models import Group
from tests.conftest import _database_url
from tests.factories import CourseFactory, member

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cut_connection_after_audit(monkeypatch):  # type: ignore[no-untyped-def]
    """The service's audit row is written, then PostgreSQL drops this request's connection
    (pg_terminate_backend from another session) before the transaction commits."""
    original = group_services.audit_record

    def audit_then_cut(**kwargs):  # type: ignore[no-untyped-def]
        event = original(**kwargs)
        pid = connection.connection.info.backend_pid
        with psycopg.connect(_database_url(), autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return event

    monkeypatch.setattr(group_services, "audit_record", audit_then_cut)


def test_a_dropped_database_connection_is_a_json_503_and_commits_nothing(
    cut_connection_after_audit,
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ta = member(course, Role.TA)
    api = APIClient()
    api.force_authenticate(ta)
    response = api.post(
        f"/api/v1/courses/{course.code}/groups/", {"name": "Ring Buffer"}, format="json"
    )
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "unavailable"
    assert "nothing was changed" in response.json()["detail"]
    assert response["Retry-After"]
    connection.close()  # the test's own connection died with the request's
    assert not Group.objects.filter(name="Ring Buffer").exists()
    assert not AuditEvent.objects.filter(action="group.created").exists()


def test_a_page_whose_database_connection_drops_says_so_in_html(cut_connection_after_audit) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    ta = member(course, Role.TA)
    client = Client(raise_request_exception=False)
    client.force_login(ta)
    response = client.post(f"/c/{course.code}/groups/create/", {"create-name": "Ring Buffer"})
    connection.close()
    assert response.status_code == 503
    assert "Briefly unavailable" in response.content.decode()
    assert not Group.objects.filter(name="Ring Buffer").exists()


def test_a_write_on_a_server_turned_read_only_is_a_503_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """After a failover a connection can reach a server that only reads (a primary demoted to a
    standby): PostgreSQL refuses the write with SQLSTATE 25006, which psycopg files under
    InternalError. That is the database being briefly unavailable, not a bug: 503, not 500
    (tests/cluster/test_db_failover.py runs the failover itself)."""
    original = group_services.audit_record

    def read_only_then_audit(**kwargs):  # type: ignore[no-untyped-def]
        with connection.cursor() as cursor:
            cursor.execute("SET transaction_read_only = on")
        return original(**kwargs)

    monkeypatch.setattr(group_services, "audit_record", read_only_then_audit)
    course = CourseFactory()
    api = APIClient()
    api.force_authenticate(member(course, Role.TA))
    response = api.post(
        f"/api/v1/courses/{course.code}/groups/", {"name": "Ring Buffer"}, format="json"
    )
    assert response.status_code == 503, response.content[:300]
    assert response.json()["code"] == "unavailable"
    assert not Group.objects.filter(name="Ring Buffer").exists()
