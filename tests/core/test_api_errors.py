"""Every response under /api/ is JSON with one error shape, and every nested object has an id."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.core.models import Role
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(member(CourseFactory(code="cs1-sp26"), Role.INSTRUCTOR))
    return client


def _is_error(response, status: int) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["detail"]
    assert body["code"]
    return body


@pytest.mark.parametrize(
    "path",
    ["/api/v1/courses/%04U/", "/api/v1/no-such-thing/", "/api/v1/courses/cs1-sp26/nodes/x/"],
)
def test_a_path_that_matches_no_route_is_a_json_404(api: APIClient, path: str) -> None:
    body = _is_error(api.get(path), 404)
    assert body["code"] == "not_found"


def test_an_anonymous_caller_gets_a_json_401(client) -> None:  # type: ignore[no-untyped-def]
    body = _is_error(client.get("/api/v1/me/"), 401)
    assert "credentials" in body["detail"].lower()


def test_a_method_the_route_does_not_take_is_a_json_405(api: APIClient) -> None:
    response = api.put("/api/v1/me/", {})
    _is_error(response, 405)


def test_a_page_number_that_does_not_exist_is_a_400_naming_the_pages(api: APIClient) -> None:
    for page in ("0", "99", "x"):
        body = _is_error(api.get(f"/api/v1/courses/?page={page}"), 400)
        assert body["field"] == "page"
        assert "pages run from 1 to 1" in body["detail"]


def test_invalid_input_names_each_field_in_the_shared_shape(api: APIClient) -> None:
    body = _is_error(api.post("/api/v1/courses/cs1-sp26/nodes/", {}, format="json"), 400)
    assert body["code"] == "invalid"
    assert body["field"] in body["errors"]
    assert {"name", "gcp_project", "zone"} <= set(body["errors"])


def test_a_non_json_body_is_refused_with_a_json_415(api: APIClient) -> None:
    response = api.post(
        "/api/v1/courses/cs1-sp26/nodes/",
        "name=x",
        content_type="application/x-www-form-urlencoded",
    )
    _is_error(response, 415)


def test_the_course_detail_gives_ids_that_the_slack_api_takes() -> None:
    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    student = member(course, Role.STUDENT)
    client = APIClient()
    client.force_authenticate(student)
    detail = client.get(f"/api/v1/courses/{course.code}/").json()
    for key in ("lectures", "recess_days", "assignments", "milestones", "grading_components"):
        assert all("id" in item for item in detail[key]), key
    assignment_id = detail["assignments"][0]["id"]
    response = client.post(
        f"/api/v1/courses/{course.code}/slack/apply/", {"assignment": assignment_id}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert client.get(f"/api/v1/courses/{course.code}/slack/me/").json()["balance"] == 2


def test_a_page_past_the_end_of_a_computed_list_is_a_400_too() -> None:
    """slack/balances pages a list built in Python (found by the fuzzer as a 500)."""
    course = CourseFactory()
    client = APIClient()
    client.force_authenticate(member(course, Role.TA))
    body = _is_error(client.get(f"/api/v1/courses/{course.code}/slack/balances/?page=3"), 400)
    assert body["field"] == "page"


@pytest.mark.django_db
def test_page_size_outside_the_documented_range_is_a_400_naming_it(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """The schema says 1 … 500; the server used to cap 501 quietly and take `null` as 50."""
    from rest_framework.test import APIClient

    from apps.core.models import User

    client = APIClient()
    client.force_login(User.objects.get(email="instructor@example.edu"))
    url = f"/api/v1/courses/{ee290_demo.code}/gradebook/scores/"
    assert len(client.get(url, {"page_size": 500}).json()["results"]) <= 500
    for bad in ("501", "null", "0", "-3", "2.5"):
        response = client.get(url, {"page_size": bad})
        assert response.status_code == 400, bad
        assert response.json()["field"] == "page_size"


@pytest.mark.django_db
def test_cancelling_slack_answers_the_list_the_schema_documents(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from django.utils import timezone
    from rest_framework.test import APIClient

    from apps.calendar.models import Assignment
    from apps.core.models import User

    course = ee290_demo
    last = Assignment.objects.filter(course=course).order_by("-due_at")[0]
    Assignment.objects.filter(pk=last.pk).update(due_at=timezone.now() + dt.timedelta(days=3))
    client = APIClient()
    client.force_login(User.objects.get(email="student01@example.edu"))
    api = f"/api/v1/courses/{course.code}/slack/"
    assert client.post(api + "apply/", {"assignment": last.pk}, format="json").status_code == 201
    response = client.post(api + "cancel/", {"assignment": last.pk}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert isinstance(body, list)
    assert body
    assert all(e["delta"] == 1 for e in body)
