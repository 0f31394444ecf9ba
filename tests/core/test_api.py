"""API skeleton: token and session auth, profile, courses scoped to membership, schema."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core.models import Role, User
from tests.factories import (
    PASSWORD,
    AssignmentFactory,
    CourseFactory,
    LectureFactory,
    MembershipFactory,
    member,
)

pytestmark = pytest.mark.django_db


def api_as(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize("url", ["/api/v1/me/", "/api/v1/courses/", "/api/v1/courses/x/"])
def test_anonymous_requests_get_401(url: str) -> None:
    response = APIClient().get(url)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_token_for_email_and_password_then_use_it() -> None:
    course = CourseFactory()
    user = member(course, email="tok@uni.example")
    client = APIClient()
    bad = client.post("/api/v1/auth/token/", {"email": "tok@uni.example", "password": "x"})
    assert bad.status_code == 400
    assert "wrong" in str(bad.json()).lower()
    good = client.post("/api/v1/auth/token/", {"email": "TOK@uni.example", "password": PASSWORD})
    assert good.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {good.json()['token']}")
    me = client.get("/api/v1/me/").json()
    assert me["email"] == user.email
    assert me["memberships"] == [
        {
            "course": course.code,
            "course_title": course.title,
            "term": course.term,
            "role": "student",
        }
    ]
    assert client.delete("/api/v1/auth/token/").status_code == 204
    assert client.get("/api/v1/me/").status_code == 401


def test_course_list_shows_only_my_courses_with_my_role() -> None:
    mine, ta_course, _other = CourseFactory(), CourseFactory(), CourseFactory()
    user = member(mine, Role.STUDENT)
    MembershipFactory(user=user, course=ta_course, role=Role.TA)
    body = api_as(user).get("/api/v1/courses/").json()
    assert body["count"] == 2
    assert {(c["code"], c["role"]) for c in body["results"]} == {
        (mine.code, "student"),
        (ta_course.code, "ta"),
    }


def test_dropped_students_lose_access() -> None:
    course = CourseFactory()
    user = member(course)
    user.memberships.update(is_active=False)
    client = api_as(user)
    assert client.get("/api/v1/courses/").json()["count"] == 0
    assert client.get(f"/api/v1/courses/{course.code}/").status_code == 404


@pytest.mark.parametrize("role", list(Role))
def test_every_role_reads_its_course_with_the_calendar(ee290, role: Role) -> None:  # type: ignore[no-untyped-def]
    body = api_as(member(ee290, role)).get("/api/v1/courses/ee290-sp26/").json()
    assert body["role"] == role.value
    assert len(body["lectures"]) == 26
    assert [a["code"] for a in body["assignments"]] == ["A1", "A2", "A3", "A4", "A5"]
    assert body["assignments"][0]["due_at"] == "2026-02-11T07:59:00Z"
    assert len(body["milestones"]) == 8
    assert body["policy"]["slack_days_allowance"] == 3
    assert {g["key"]: g["parent"] for g in body["grading_components"]}[
        "project-impact"
    ] == "project"


def test_a_course_i_do_not_belong_to_is_404(ee290) -> None:  # type: ignore[no-untyped-def]
    outsider = member(CourseFactory())
    response = api_as(outsider).get("/api/v1/courses/ee290-sp26/")
    assert response.status_code == 404
    assert response.json()["detail"] == "No such course, or you are not a member of it."


def test_list_and_detail_queries_do_not_grow_with_data() -> None:
    user = User.objects.create_user("q@uni.example", "pw")
    client = api_as(user)

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    first = CourseFactory()
    MembershipFactory(user=user, course=first)
    AssignmentFactory(course=first)
    small_list, small_detail = (
        queries("/api/v1/courses/"),
        queries(f"/api/v1/courses/{first.code}/"),
    )
    for _ in range(5):
        MembershipFactory(user=user, course=CourseFactory())
    AssignmentFactory.create_batch(8, course=first)
    LectureFactory.create_batch(20, course=first)
    assert queries("/api/v1/courses/") == small_list
    assert queries(f"/api/v1/courses/{first.code}/") == small_detail


def test_the_openapi_schema_validates_without_warnings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "schema.yaml"
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(out), stderr=StringIO()
    )
    text = out.read_text()
    assert "openapi: 3.0.3" in text
    for path in ("/api/v1/me/", "/api/v1/courses/{code}/", "/api/v1/auth/token/"):
        assert path in text


def test_schema_and_docs_are_served(client) -> None:  # type: ignore[no-untyped-def]
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs
    assert "cdn" not in docs.lower()
    assert "unpkg" not in docs.lower()


def test_each_client_gets_its_own_token_and_logging_out_one_keeps_the_other() -> None:
    """Revoking from one client used to log out every client of that person."""
    course = CourseFactory()
    member(course, email="two@uni.example")
    creds = {"email": "two@uni.example", "password": PASSWORD}
    laptop, ci = APIClient(), APIClient()
    a = laptop.post("/api/v1/auth/token/", {**creds, "client": "grading laptop"}).json()
    b = ci.post("/api/v1/auth/token/", creds, HTTP_USER_AGENT="github-actions/2").json()
    assert a["token"] != b["token"]
    laptop.credentials(HTTP_AUTHORIZATION=f"Token {a['token']}")
    ci.credentials(HTTP_AUTHORIZATION=f"Token {b['token']}")
    listed = {t["name"]: t for t in laptop.get("/api/v1/auth/tokens/").json()}
    assert set(listed) == {"grading laptop", "github-actions/2"}
    assert listed["grading laptop"]["last_used_at"] is not None  # this very call used it
    assert "token" not in listed["grading laptop"]  # the key is never shown again
    assert laptop.delete("/api/v1/auth/token/").status_code == 204
    assert laptop.get("/api/v1/me/").status_code == 401
    assert ci.get("/api/v1/me/").status_code == 200
    assert ci.delete(f"/api/v1/auth/tokens/{a['id']}/").status_code == 204  # already revoked
    assert ci.delete("/api/v1/auth/tokens/999999/").status_code == 404


def test_the_tokens_page_makes_shows_once_and_revokes_after_confirming() -> None:
    from django.test import Client

    from apps.core.models import ApiToken

    course = CourseFactory()
    user = member(course)
    page = Client()
    page.force_login(user)
    made = page.post("/accounts/tokens/create/", {"name": "my script"}).content.decode()
    key = made.split('<code class="key">')[1].split("<")[0]
    assert len(key) == 40
    assert "it is not shown again" in made
    assert key not in page.get("/accounts/tokens/").content.decode()
    api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/v1/me/").status_code == 200
    token = ApiToken.objects.get(user=user)
    confirm = page.get(f"/accounts/tokens/{token.pk}/revoke/").content.decode()
    assert "Revoke “my script”?" in confirm
    assert api.get("/api/v1/me/").status_code == 200  # nothing happens until confirmed
    page.post(f"/accounts/tokens/{token.pk}/revoke/")
    assert api.get("/api/v1/me/").status_code == 401
    assert page.post("/accounts/tokens/create/", {"name": ""}).status_code == 400
    other = Client()
    other.force_login(member(course))
    assert other.get(f"/accounts/tokens/{token.pk}/revoke/").status_code == 404


def test_the_51st_token_retires_the_longest_unused_one_not_a_busy_one() -> None:
    from django.utils import timezone

    from apps.core.models import ApiToken
    from apps.core.tokens import MAX_LIVE, token_create

    user = member(CourseFactory())
    first, _ = token_create(user=user, name="busy CI job")
    for i in range(MAX_LIVE - 1):
        token_create(user=user, name=f"laptop {i}")
    ApiToken.objects.filter(pk=first.pk).update(last_used_at=timezone.now())
    oldest_idle = ApiToken.objects.filter(user=user).exclude(pk=first.pk).order_by("created_at")[0]
    newest, _ = token_create(user=user, name="one more")
    live = set(
        ApiToken.objects.filter(user=user, revoked_at__isnull=True).values_list("pk", flat=True)
    )
    assert len(live) == MAX_LIVE
    assert {first.pk, newest.pk} <= live
    assert oldest_idle.pk not in live
