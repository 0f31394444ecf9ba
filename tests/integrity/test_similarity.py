"""The similarity check as staff use it: upload, worker, ranked pairs, side by side, API.

The planted case (tests/integrity/planted.py): group A's solution copied into group B with every
identifier renamed and the comments rewritten is ranked first, at 100 %; group E, which handed
in the starter code alone, is never paired; two independent solutions stay under the threshold.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import Role, User
from apps.integrity import compare
from apps.integrity.models import SimilarityCheck, SimilarityPair, SubmittedFile
from tests.factories import CourseFactory, GroupFactory, GroupMembershipFactory, member
from tests.integrity import planted

pytestmark = pytest.mark.django_db


def zip_of(files: dict[str, str | bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in files.items():
            z.writestr(name, body)
    return buf.getvalue()


def folders_zip() -> bytes:
    return zip_of(
        {
            "Alpha/train.py": planted.ORIGINAL,
            "Bravo/src/train.py": planted.RENAMED_COPY,
            "Charlie/train.py": planted.INDEPENDENT_SKLEARN,
            "Delta/train.py": planted.INDEPENDENT_TORCH,
            "Echo/train.py": planted.STARTER,
            "Echo/notes.bin": b"\x00\x01",
        }
    )


STARTER_ZIP = zip_of({"starter/train.py": planted.STARTER})


@pytest.fixture
def course_groups() -> dict[str, Any]:
    course = CourseFactory()
    groups = {}
    for name in ("Alpha", "Bravo", "Charlie", "Delta", "Echo"):
        g = GroupFactory(course=course, name=name)
        GroupMembershipFactory(group=g, user=member(course, email=f"{name.lower()}@uni.edu"))
        groups[name] = g
    return {
        "course": course,
        "groups": groups,
        "ta": member(course, Role.TA),
        "student": User.objects.get(email="alpha@uni.edu"),
    }


def _client(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _upload(
    client: Client,
    code: str,
    data: bytes,
    *,
    starter: bytes | None = STARTER_ZIP,
    name: str = "subs.zip",
    **extra: Any,
) -> Any:
    form: dict[str, Any] = {
        "title": "A2 code",
        "threshold": 50,
        "archive": SimpleUploadedFile(name, data),
    }
    if starter is not None:
        form["starter"] = SimpleUploadedFile("starter.zip", starter)
    form.update(extra)
    return client.post(f"/c/{code}/integrity/upload/", form)


def _run(client: Client, code: str, data: bytes, capture: Any, **kw: Any) -> Any:
    with capture(execute=True):
        return _upload(client, code, data, **kw)


def test_the_renamed_copy_is_ranked_first_and_marked_on_the_page_and_in_the_api(
    course_groups, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from tests.test_api_twins import page_rows

    course, ta = course_groups["course"], course_groups["ta"]
    client = _client(ta)
    sent = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)
    assert sent.status_code == 302, sent.content[:500]
    check = SimilarityCheck.objects.get()
    assert check.status == "done", check.note
    assert check.progress == 100
    page = client.get(sent["Location"]).content.decode()
    rows = page_rows(page, "Group pairs")
    assert rows[0][1] == "Alpha ↔ Bravo", rows
    assert rows[0][2].startswith("100 %")
    assert "flagged" in rows[0][2]
    # the starter code alone is never paired; the independent solutions are not flagged
    assert not any("Echo" in r[1] for r in rows), rows
    assert [r[1] for r in rows if "flagged" in r[2]] == ["Alpha ↔ Bravo"]
    indep = SimilarityPair.objects.filter(group_a__name="Charlie", group_b__name="Delta").first()
    assert indep is None or indep.percent < check.threshold
    pair = SimilarityPair.objects.order_by("-percent").first()
    assert pair is not None
    side = client.get(f"/c/{course.code}/integrity/{check.pk}/pairs/{pair.pk}/").content.decode()
    assert side.count("<mark>") > 10
    assert "weights" in side
    assert "w" in side
    # the API says the same, and its detail gives the character ranges
    api = APIClient()
    api.force_authenticate(ta)
    body = api.get(f"/api/v1/courses/{course.code}/similarity/{check.pk}/pairs/").json()
    first = body["results"][0]
    assert (first["rank"], first["group_a"], first["group_b"]) == (1, "Alpha", "Bravo")
    assert first["percent"] == pytest.approx(1.0)
    assert first["flagged"] is True
    detail = api.get(
        f"/api/v1/courses/{course.code}/similarity/{check.pk}/pairs/{first['id']}/"
    ).json()
    marked_b = "".join(detail["files"][0]["text_b"][s:e] for s, e in detail["files"][0]["slices_b"])
    assert "gw = X.T @ diff / len(Y)" in marked_b  # the renamed copy's body is what matched
    assert "def load_data(path)" not in marked_b  # the starter code is not
    csv = b"".join(
        client.get(f"/c/{course.code}/integrity/{check.pk}/export.csv").streaming_content
    )
    assert csv.decode().splitlines()[1].startswith("1,Alpha,Bravo,100.0")


def test_students_never_see_a_check_page_or_api(
    course_groups, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = course_groups["course"]
    _run(
        _client(course_groups["ta"]), course.code, folders_zip(), django_capture_on_commit_callbacks
    )
    check = SimilarityCheck.objects.get()
    student = _client(course_groups["student"])
    for url in (f"/c/{course.code}/integrity/", f"/c/{course.code}/integrity/{check.pk}/"):
        assert student.get(url).status_code == 403
    api = APIClient()
    api.force_authenticate(course_groups["student"])
    assert api.get(f"/api/v1/courses/{course.code}/similarity/").status_code == 403
    refused = _upload(student, course.code, folders_zip())
    assert refused.status_code == 403
    assert SimilarityCheck.objects.count() == 1


def test_the_same_inputs_again_show_the_earlier_check_without_comparing(
    course_groups, celery_eager, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    course = course_groups["course"]
    client = _client(course_groups["ta"])
    first = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)

    def no_recompute(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("compared again")

    monkeypatch.setattr(compare, "compare", no_recompute)
    again = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)
    assert again["Location"] == first["Location"]
    assert SimilarityCheck.objects.count() == 1
    page = client.get(again["Location"]).content.decode()
    assert "nothing was compared again" in page
    assert "Alpha ↔ Bravo" in page


GRADESCOPE_META = """\
submission_101:
  :submitters:
  - :name: Al Pha
    :sid: '1001'
    :email: ALPHA@uni.edu
  :created_at: 2026-03-01 10:00:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.9E1
  :history: []
submission_202:
  :submitters:
  - :name: Bra Vo
    :sid: '1002'
    :email: bravo@uni.edu
  :created_at: 2026-03-01 11:00:00.000000000 -08:00
submission_303:
  :submitters:
  - :name: Nobody
    :email: ghost@uni.edu
"""


def test_a_gradescope_export_maps_submissions_to_groups_by_its_metadata(
    course_groups, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = course_groups["course"]
    data = zip_of(
        {
            "assignment_42_export/submission_metadata.yml": GRADESCOPE_META,
            "assignment_42_export/submission_101/train.py": planted.ORIGINAL,
            "assignment_42_export/submission_202/train.py": planted.RENAMED_COPY,
            "assignment_42_export/submission_303/train.py": planted.ORIGINAL,
        }
    )
    client = _client(course_groups["ta"])
    sent = _run(client, course.code, data, django_capture_on_commit_callbacks)
    check = SimilarityCheck.objects.get()
    assert check.source == "gradescope"
    assert check.status == "done"
    pair = check.pairs.get()
    assert {pair.group_a.name, pair.group_b.name} == {"Alpha", "Bravo"}
    assert any("submission_303 (ghost@uni.edu)" in w for w in check.warnings)
    assert "submission_303" in client.get(sent["Location"]).content.decode()


def _bomb() -> bytes:
    return zip_of({"Alpha/big.py": "0" * (3 * 1024 * 1024), "Bravo/a.py": "x = 1\n"})


def _symlink() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("Alpha/a.py", "x = 1\n")
        info = zipfile.ZipInfo("Bravo/link.py")
        info.create_system = 3
        info.external_attr = (0o120777) << 16
        z.writestr(info, "/etc/passwd")
    return buf.getvalue()


HOSTILE = {
    "not a zip": (lambda: b"%PDF-1.4 not a zip at all", "is not a zip archive", {}),
    "too large": (folders_zip, "the limit is", {"MAX_UPLOAD_BYTES": 1000}),
    "zip bomb (ratio)": (_bomb, "a zip bomb", {}),
    "zip bomb (total)": (folders_zip, "(a zip bomb?)", {"MAX_TOTAL_BYTES": 2000}),
    "path traversal": (
        lambda: zip_of({"Alpha/a.py": "x=1", "../../etc/cron.d/x.py": "x"}),
        "points outside the archive (../)",
        {},
    ),
    "absolute path": (
        lambda: zip_of({"Alpha/a.py": "x=1", "/etc/passwd.py": "x"}),
        "is an absolute path",
        {},
    ),
    "symlink": (_symlink, "is a symbolic link", {}),
    "too many files": (folders_zip, "files; the limit is 3", {"MAX_FILES": 3}),
    "damaged": (lambda: folders_zip()[:200], "zip", {}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_archive_is_refused_with_its_reason_and_nothing_stored(
    case: str, course_groups, celery_eager, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from apps.integrity import archive

    make, said, limits = HOSTILE[case]
    for name, value in limits.items():
        monkeypatch.setattr(archive, name, value)
    course = course_groups["course"]
    client = _client(course_groups["ta"])
    sent = _run(client, course.code, make(), django_capture_on_commit_callbacks, starter=None)
    assert sent.status_code == 302
    page = client.get(sent["Location"]).content.decode()
    assert said in page.replace("&#x27;", "'"), page[
        page.find("messages") : page.find("messages") + 800
    ]
    assert "Nothing was stored." in page
    assert SimilarityCheck.objects.count() == 0
    assert SubmittedFile.objects.count() == 0


def test_a_hostile_starter_archive_is_refused_too(
    course_groups, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = course_groups["course"]
    client = _client(course_groups["ta"])
    bad = zip_of({"../escape.py": "x"})
    sent = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks, starter=bad)
    page = client.get(sent["Location"]).content.decode()
    assert "The starter code archive" in page
    assert "outside the archive" in page
    assert SimilarityCheck.objects.count() == 0


def test_a_worker_that_crashes_ends_the_check_failed_with_the_reason(
    course_groups, celery_eager, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    def boom(*_a: Any, **_k: Any) -> Any:
        raise MemoryError("out of memory")

    monkeypatch.setattr(compare, "compare", boom)
    course = course_groups["course"]
    client = _client(course_groups["ta"])
    with pytest.raises(MemoryError):
        _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)
    check = SimilarityCheck.objects.get()
    assert check.status == "failed"
    assert "MemoryError: out of memory" in check.note
    page = client.get(f"/c/{course.code}/integrity/{check.pk}/").content.decode()
    assert "The check failed" in page
    assert "out of memory" in page


def test_a_lost_worker_is_swept_to_failed_and_listed_meanwhile(course_groups) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from django.utils import timezone

    from apps.core.jobs import jobs, sweep_all

    course = course_groups["course"]
    check = SimilarityCheck.objects.create(
        course=course,
        title="A3",
        source="folders",
        inputs_hash="x" * 64,
        status="running",
        progress=40,
        takeovers=2,  # its third worker; one claimed before leases existed has none
    )
    listed = [j for j in jobs(course.pk) if j.kind == "similarity check"]
    assert [(j.status, j.detail) for j in listed] == [("running", "40 %")]
    SimilarityCheck.objects.filter(pk=check.pk).update(
        updated_at=timezone.now() - dt.timedelta(minutes=11)
    )
    listed = [j for j in jobs(course.pk) if j.kind == "similarity check"]
    assert [(j.status, j.detail) for j in listed] == [("stuck", "40 %")]
    assert f"integrity: similarity check {check.pk} failed: its worker stopped" in sweep_all(
        timezone.now()
    )
    check.refresh_from_db()
    assert check.status == "failed"
    assert "Upload again" in check.note


def test_the_same_inputs_with_another_threshold_flag_the_stored_pairs_again(
    course_groups, celery_eager, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The second upload asks for 5 %: the earlier check is shown flagged at 5 %, not at its
    old 50 %, its pairs flagged again from the stored percentages, nothing compared again."""
    from apps.core.models import AuditEvent
    from tests.test_api_twins import page_rows

    course = course_groups["course"]
    client = _client(course_groups["ta"])
    first = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)
    check = SimilarityCheck.objects.get()
    assert check.stats["flagged"] == 1
    low = SimilarityPair.objects.filter(check_run=check, percent__gte=0.05, percent__lt=0.5)
    assert low.exists()  # independent solutions share a little beyond the starter code
    monkeypatch.setattr(compare, "compare", lambda *_a, **_k: pytest.fail("compared again"))
    again = _run(
        client, course.code, folders_zip(), django_capture_on_commit_callbacks, threshold=5
    )
    assert again["Location"] == first["Location"]
    assert SimilarityCheck.objects.count() == 1
    page = client.get(again["Location"]).content.decode()
    assert "flagged at 5 %" in page
    assert "now flagged at 5 % (was 50 %)" in page
    want = SimilarityPair.objects.filter(check_run=check, percent__gte=0.05).count()
    rows = page_rows(page, "Group pairs")
    assert sum("flagged" in r[2] for r in rows) == want > 1
    check.refresh_from_db()
    assert (check.threshold, check.stats["flagged"]) == (0.05, want)
    event = AuditEvent.objects.get(action="integrity.similarity_reflagged")
    assert (event.before, event.after) == ({"threshold": 0.5}, {"threshold": 0.05, "flagged": want})
    # the API says the same
    api = APIClient()
    api.force_authenticate(course_groups["ta"])
    body = api.get(f"/api/v1/courses/{course.code}/similarity/{check.pk}/pairs/").json()
    assert sum(r["flagged"] for r in body["results"]) == want


def test_the_same_inputs_with_another_milestone_show_that_milestones_declared_sources(
    course_groups, celery_eager, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """#70: the second upload chose A3's milestone, and the page kept showing A2's declared
    sources without a word. Now the check shows the milestone chosen, says it changed, and the
    change is audited; choosing none keeps the earlier one and says which."""
    from apps.core.models import AuditEvent
    from apps.milestones.models import GroupMilestone
    from tests.factories import MilestoneFactory

    course = course_groups["course"]
    alpha = course_groups["groups"]["Alpha"]
    a2 = MilestoneFactory(course=course, name="A2 report", tracked=True)
    a3 = MilestoneFactory(course=course, name="A3 report", tracked=True)
    GroupMilestone.objects.create(course=course, milestone=a2, group=alpha, sources="A2 notes")
    GroupMilestone.objects.create(course=course, milestone=a3, group=alpha, sources="GitHub gist")
    client = _client(course_groups["ta"])
    first = _run(
        client, course.code, folders_zip(), django_capture_on_commit_callbacks, milestone=a2.pk
    )
    check = SimilarityCheck.objects.get()
    pair = SimilarityPair.objects.filter(check_run=check, group_a=alpha).order_by("-percent")[0]
    monkeypatch.setattr(compare, "compare", lambda *_a, **_k: pytest.fail("compared again"))
    again = _run(
        client, course.code, folders_zip(), django_capture_on_commit_callbacks, milestone=a3.pk
    )
    assert again["Location"] == first["Location"]
    page = client.get(again["Location"]).content.decode()
    assert "declared sources are now from A3 report (was A2 report)" in page
    assert "declared sources from A3 report" in page
    shown = client.get(f"/c/{course.code}/integrity/{check.pk}/pairs/{pair.pk}/").content.decode()
    assert "GitHub gist" in shown
    assert "A2 notes" not in shown
    event = AuditEvent.objects.get(action="integrity.similarity_reflagged")
    assert (event.before, event.after) == ({"milestone": "A2 report"}, {"milestone": "A3 report"})
    kept = _run(client, course.code, folders_zip(), django_capture_on_commit_callbacks)
    page = client.get(kept["Location"]).content.decode()
    assert "declared sources are from A3 report; nothing was compared again" in page
