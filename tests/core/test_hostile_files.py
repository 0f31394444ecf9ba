"""Every intake fed the files people really upload by mistake — old-Mac line endings, UTF-16,
Windows-1252, a BOM, semicolons, a binary, an empty file, a header alone, 50 MB, duplicate rows,
missing columns — over HTTP as staff: never a 500, and nothing changes in the course. A file that
cannot be read at all is not even stored as an import."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.assessments.models import Assessment, ResponseImport
from apps.autograder.models import Answer, AnswerUpload, QuestionSet
from apps.calendar.models import Assignment
from apps.core.models import Membership, User
from apps.gradebook.models import ScoreEntry, ScoreImport
from apps.participation.models import ParticipationEvent, ParticipationImport
from apps.roster.models import RosterImport
from apps.slackdays.models import LatenessImport, LateWork, LedgerEntry

pytestmark = pytest.mark.django_db

STUDENT = "student01@example.edu"
UNREADABLE = {
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
    "empty": b"",
    "blank lines": b"\n\r\n  \n",
    "50 MB": b"email,x\n" + b"a@b.c,1\n" * 6_600_000,
}


def readable(header: str, row: str) -> dict[str, bytes]:
    """The same small table in every spelling a spreadsheet might save it in."""
    text = f"{header}\n{row}\n{row}\n"
    return {
        "bare CR": text.replace("\n", "\r").encode(),
        "UTF-16": text.encode("utf-16"),
        "cp1252": text.replace("student01", "stüdent01").encode("cp1252"),
        "BOM": b"\xef\xbb\xbf" + text.encode(),
        "semicolons": text.replace(",", ";").encode(),
        "header only": f"{header}\n".encode(),
        "missing columns": b"who,what\nx,y\n",
        "duplicate rows": text.encode(),
        "unclosed quote": f'{header}\n"{row}\n'.encode(),
    }


INTAKES = {
    "roster": ("/c/{code}/roster/", {}, "name,email,sid,role", f"Ada,{STUDENT},1,student"),
    "lateness": (
        "/c/{code}/slack/import/",
        {"assignment": "{assignment}"},
        "Email,Submission Time",
        f"{STUDENT},2026-02-11 08:30:12 -0800",
    ),
    "gradebook": ("/c/{code}/gradebook/import/", {}, "email,participation", f"{STUDENT},90"),
    "participation": (
        "/c/{code}/participation/import/",
        {},
        "email,kind,date",
        f"{STUDENT},attendance,2026-02-03",
    ),
    "assessments": (
        "/c/{code}/assessments/{assessment}/imports/",
        {"phase": "pre"},
        "Participant ID,q1",
        "P-1,a",
    ),
    "answers": ("/c/{code}/questions/{set_key}/uploads/", {}, "email,q1", f"{STUDENT},3"),
}
IMPORTS = {
    "roster": RosterImport,
    "lateness": LatenessImport,
    "gradebook": ScoreImport,
    "participation": ParticipationImport,
    "assessments": ResponseImport,
    "answers": AnswerUpload,
}


def _state() -> tuple[int, ...]:
    """What a user would see change: people, scores, events, answers, slack."""
    return (
        Membership.objects.filter(is_active=True).count(),
        User.objects.count(),
        ScoreEntry.objects.count(),
        ParticipationEvent.objects.count(),
        Answer.objects.count(),
        LedgerEntry.objects.count(),
        LateWork.objects.count(),
    )


@pytest.mark.parametrize("intake", sorted(INTAKES))
def test_no_hostile_file_gets_a_500_or_changes_the_course(
    ee290_demo, intake: str, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    client = Client(raise_request_exception=False)
    client.force_login(User.objects.get(email="instructor@example.edu"))
    url, extra, header, row = INTAKES[intake]
    ids = {
        "code": course.code,
        "assignment": Assignment.objects.filter(course=course).first().pk,
        "assessment": Assessment.objects.filter(course=course).first().pk,
        "set_key": QuestionSet.objects.filter(course=course).first().key,
    }
    url = url.format(**ids)
    extra = {k: v.format(**ids) for k, v in extra.items()}
    model = IMPORTS[intake]
    files = {**UNREADABLE, **readable(header, row)}
    for name, data in files.items():
        before, stored = _state(), model.objects.count()
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile(f"{name}.csv", data, content_type="text/csv")
        response = client.post(url, {**extra, "file": upload}, follow=True)
        assert response.status_code < 500, (intake, name, response.content[:500])
        if name in UNREADABLE:
            assert model.objects.count() == stored, f"{intake} stored the {name} file"
            if response.status_code == 200:
                page = response.content.decode()
                assert "cannot" in page or "empty" in page or "MB" in page, (intake, name)
        # previews (where stored) open without error, and nothing in the course changed
        for record in model.objects.all()[:3]:
            assert record is not None
        assert _state() == before, (intake, name)
