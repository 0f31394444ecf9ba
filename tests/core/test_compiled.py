"""Hot reads with their SQL built once (`apps.core.compiled`): each call gets its own rows (the
parameters are swapped, not the first call's kept), model rows come with their select_related
objects, another thread reads through its own connection, and every misuse that would return
another call's rows is refused when the query is first built."""

from __future__ import annotations

import datetime as dt
import threading
import uuid

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, connections
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from apps.core.compiled import compiled_query
from apps.core.models import Membership, Role, User
from tests.factories import CourseFactory, member


def _membership(user_id: int, code: str):  # type: ignore[no-untyped-def]
    return (
        Membership.objects.filter(user_id=user_id, is_active=True, course__code=code)
        .select_related("course")
        .order_by("pk")
    )


def _emails(course_id: int):  # type: ignore[no-untyped-def]
    return (
        Membership.objects.filter(course_id=course_id)
        .order_by("user__email")
        .values_list("user__email", flat=True)
    )


def _key() -> str:  # each test its own key: the cache lives as long as the process
    return f"test.{uuid.uuid4().hex}"


@pytest.mark.django_db
def test_each_call_reads_its_own_rows_with_the_related_objects() -> None:
    a, b = CourseFactory(), CourseFactory()
    ann = member(a, Role.STUDENT)
    bob = member(b, Role.TA)
    key = _key()
    mine = compiled_query(key, _membership, ann.pk, a.code)
    assert [(m.user_id, m.course.code, m.role) for m in mine] == [(ann.pk, a.code, "student")]
    with CaptureQueriesContext(connection) as ctx:
        theirs = compiled_query(key, _membership, bob.pk, b.code)
        assert theirs[0].course.title == b.title  # select_related: no query for the course
    assert [(m.user_id, m.course_id, m.role) for m in theirs] == [(bob.pk, b.pk, "ta")]
    assert len(ctx.captured_queries) == 1
    assert compiled_query(key, _membership, ann.pk, b.code) == []  # ann is not in b
    if connection.vendor == "postgresql":  # on SQLite Django's own query raises OverflowError
        assert compiled_query(key, _membership, 2**70, b.code) == []  # as Django: no rows
    assert list(_membership(bob.pk, b.code)) == theirs  # the same rows as the queryset's


@pytest.mark.django_db
def test_values_list_rows_and_ordering_come_back_as_the_queryset_gives_them() -> None:
    course = CourseFactory()
    for email in ("c@x.example", "a@x.example", "b@x.example"):
        member(course, email=email)
    key = _key()
    assert compiled_query(key, _emails, course.pk) == list(_emails(course.pk))
    assert compiled_query(key, _emails, course.pk) == ["a@x.example", "b@x.example", "c@x.example"]
    assert compiled_query(key, _emails, CourseFactory().pk) == []


def _joined_after(course_id: int, since: dt.datetime):  # type: ignore[no-untyped-def]
    return (
        Membership.objects.filter(course_id=course_id, user__date_joined__gt=since)
        .order_by("user__email")
        .values_list("user__email", flat=True)
    )


@pytest.mark.django_db
def test_a_datetime_the_database_takes_as_text_is_sent_in_the_databases_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite (`make run`) gets datetimes as text; the swapped value must be converted the same
    way, or the dashboard's checkoff panel would fail there."""

    def as_text(value: dt.datetime | None) -> str | None:  # what SQLite's backend does
        return None if value is None else str(value.astimezone(dt.UTC).replace(tzinfo=None))

    monkeypatch.setattr(connection.ops, "adapt_datetimefield_value", as_text)
    course = CourseFactory()
    t0 = dt.datetime(2026, 1, 10, 12, tzinfo=dt.UTC)
    for i, email in enumerate(("a@x.example", "b@x.example", "c@x.example")):
        user = member(course, email=email)
        User.objects.filter(pk=user.pk).update(date_joined=t0 + dt.timedelta(days=i))
    key = _key()
    assert compiled_query(key, _joined_after, course.pk, t0) == ["b@x.example", "c@x.example"]
    later = t0 + dt.timedelta(days=1, hours=1)
    assert compiled_query(key, _joined_after, course.pk, later) == ["c@x.example"]
    assert compiled_query(key, _joined_after, course.pk, later) == list(
        _joined_after(course.pk, later)
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_another_thread_reads_through_its_own_connection() -> None:
    course = CourseFactory()
    ann = member(course)
    key = _key()
    assert compiled_query(key, _membership, ann.pk, course.code)  # built on this thread
    seen: list[object] = []

    def read() -> None:
        try:
            rows = compiled_query(key, _membership, ann.pk, course.code)
            seen.append((rows[0].user_id, connections["default"] is not connection))
        finally:
            connections.close_all()

    t = threading.Thread(target=read)
    t.start()
    t.join()
    assert seen == [(ann.pk, True)]


def _settings(course_id: int):  # type: ignore[no-untyped-def]
    from apps.core.models import Course

    return Course.objects.filter(pk=course_id).values_list("reminder_hours", "letter_cutoffs")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_values_are_converted_alike_on_every_connection() -> None:
    """The converters (JSON text to lists, …) are worked out once per connection and kept: a
    second thread's connection gets its own, and both give what the queryset gives."""
    from apps.core.models import Course

    a, b = CourseFactory(), CourseFactory()
    Course.objects.filter(pk=b.pk).update(reminder_hours=[72, 2])
    key = _key()
    assert compiled_query(key, _settings, a.pk) == list(_settings(a.pk))
    seen: list[object] = []

    def read() -> None:
        try:
            seen.append((compiled_query(key, _settings, b.pk), list(_settings(b.pk))))
        finally:
            connections.close_all()

    t = threading.Thread(target=read)
    t.start()
    t.join()
    [(compiled, orm)] = seen
    assert compiled == orm
    assert compiled[0][0] == [72, 2]  # a list, not the JSON text
    assert compiled_query(key, _settings, b.pk)[0][0] == [72, 2]  # and again on this thread


def _captures(code: str):  # type: ignore[no-untyped-def]
    return Membership.objects.filter(course__code=code)


def _contains(text: str):  # type: ignore[no-untyped-def]
    return User.objects.filter(email__contains=text)  # the SQL gets '%text%', not text


def _twice(user_id: int):  # type: ignore[no-untyped-def]
    return Membership.objects.filter(Q(user_id=user_id) | Q(course_id=user_id))


@pytest.mark.django_db
def test_misuses_are_refused_when_first_built() -> None:
    code = CourseFactory().code
    with pytest.raises(ImproperlyConfigured, match="only its arguments"):
        compiled_query(_key(), lambda: _captures(code))  # the code would be built in for good
    with pytest.raises(ImproperlyConfigured, match="reaches the SQL 0 times"):
        compiled_query(_key(), _contains, "ann")
    with pytest.raises(ImproperlyConfigured, match="reaches the SQL 2 times"):
        compiled_query(_key(), _twice, 1)
    with pytest.raises(ImproperlyConfigured, match="a bool changes the SQL"):
        compiled_query(_key(), _twice, True)
    key = _key()
    compiled_query(key, _membership, 1, code)
    with pytest.raises(TypeError, match="arguments of types"):
        compiled_query(key, _membership, None, code)  # None would be `= NULL`, another shape
