"""NUL and other control characters are refused with a 400 naming the field, in query filters,
JSON bodies and forms alike; tabs and newlines, which people type, pass."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import User

pytestmark = pytest.mark.django_db


def _staff(api: bool = False):  # type: ignore[no-untyped-def]
    client = APIClient() if api else Client()
    client.force_login(User.objects.get(email="instructor@example.edu"))
    return client


def test_a_nul_in_a_filter_is_a_400_naming_it(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    url = f"/api/v1/courses/{ee290_demo.code}/gradebook/scores/"
    client = _staff(api=True)
    assert client.get(url, {"component": "participation"}).status_code == 200
    response = client.get(url + "?component=a%00b")
    assert response.status_code == 400
    assert response.json()["field"] == "component"
    assert "control character" in response.json()["detail"]


def test_a_control_character_deep_in_a_json_body_is_named_by_its_path(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    url = f"/api/v1/courses/{ee290_demo.code}/gradebook/scores/"
    body = {"changes": [{"component": "participation", "note": "ok"}, {"note": "bell\x07"}]}
    response = _staff(api=True).post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == "changes[1].note"


def test_forms_refuse_control_characters_and_keep_tabs_and_newlines(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    client = _staff()
    url = f"/c/{ee290_demo.code}/groups/create/"
    bad = client.post(url, {"name": "Team\x00Null"})
    assert bad.status_code == 400
    assert "name: this text holds a control character" in bad.content.decode()
    fine = client.post(url, {"name": "Tabbed\tTeam"}, follow=True)
    assert fine.status_code == 200
    assert "Team\x00Null" not in fine.content.decode()
