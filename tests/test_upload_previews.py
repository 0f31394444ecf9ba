"""The preview of an upload stays a page a person can read when the file is huge or wrong: each
list shows its first 200 rows and says how many more there are, the counts above it count every
row, and confirming still imports every row. Found by uploading the wrong file: 20,000 rows of
problems made the roster preview a 5 MB page; 5,000 new students made it 820 KB."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.core.models import Membership, Role, User
from apps.gradebook import services as gradebook
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _upload_roster(client: Client, code: str, body: str) -> str:
    sent = client.post(
        f"/c/{code}/roster/", {"file": SimpleUploadedFile("class.csv", body.encode())}
    )
    assert sent.status_code == 302, sent.status_code
    return sent["Location"]


def test_a_wrong_file_of_20000_rows_previews_200_problems_and_says_how_many_more() -> None:
    course = CourseFactory()
    ta = as_user(member(course, Role.TA))
    body = "email,name,role\n" + "".join(f"not-an-email-{i},,wizard\n" for i in range(20_000))
    page = ta.get(_upload_roster(ta, course.code, body)).content.decode()
    assert len(page) < 100_000, len(page)
    shown = ("missing name", "is not an email address", "unknown role")
    assert sum(page.count(m) for m in shown) == 200  # three problems a row, the first 200
    assert "<dt>Problems</dt><dd>60000</dd>" in page  # the count counts every one
    assert "… and 59,800 more problems, not listed here: the first 200 are." in page
    assert "<dt>Problems</dt><dd>" in page
    assert "Confirm" not in page


def test_5000_new_students_preview_the_first_200_and_confirming_adds_all_5000() -> None:
    course = CourseFactory()
    ta = as_user(member(course, Role.TA))
    body = "email,name,role\n" + "".join(
        f"new{i}@example.edu,New Person {i},student\n" for i in range(5_000)
    )
    preview = _upload_roster(ta, course.code, body)
    page = ta.get(preview).content.decode()
    assert len(page) < 100_000, len(page)
    assert "<dt>Added</dt><dd>5000</dd>" in page
    assert "… and 4,800 more added, not listed here: the first 200 are." in page
    assert "Confirm: import 5000 added" in page
    ta.post(preview)
    assert Membership.objects.filter(course=course, role=Role.STUDENT).count() == 5_000


def test_a_score_file_of_problems_lists_the_first_200(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    ta = User.objects.get(email="ta1@example.edu")
    rows = "".join(f"ghost{i}@example.edu,80\n" for i in range(1_000))
    record, plan = gradebook.import_upload(
        actor=ta,
        course=ee290_demo,
        filename="scores.csv",
        data=("email,Technical quality\n" + rows).encode(),
    )
    assert len(plan.problems) == 1_000
    page = as_user(ta).get(f"/c/{ee290_demo.code}/gradebook/imports/{record.pk}/")
    html = page.content.decode()
    assert "1000 problems: nothing can be stored" in html
    assert (
        html.count("@example.edu&#x27;: no student") + html.count("@example.edu': no student")
        == 200
    )
    assert "… and 800 more problems, not listed here: the first 200 are." in html


def test_an_answers_file_of_unknown_students_keeps_1000_problems_and_counts_them_all(
    celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """The answers preview is polled by the page's progress bar: it carries the first 1,000
    problems and the count of all, never the whole list."""
    from apps.autograder.bank import BANKS, bank_load
    from apps.autograder.models import Answer
    from tests.factories import AssignmentFactory

    course = CourseFactory()
    AssignmentFactory(course=course, code="A1")
    quiz = bank_load(course=course, path=BANKS / "mlsysim-quiz.yaml")
    ta = member(course, Role.TA)
    member(course, email="ada@uni.edu")
    rows = "".join(f"ghost{i}@uni.edu,a,b\n" for i in range(5_000))
    data = ("email,q1,q2\nada@uni.edu,b,a\n" + rows).encode()
    client = as_user(ta)
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(
            f"/c/{course.code}/questions/{quiz.key}/uploads/",
            {"file": SimpleUploadedFile("answers.csv", data)},
        )
    assert sent.status_code == 302, sent.status_code
    upload = quiz.uploads.get()
    poll = client.get(f"/c/{course.code}/questions/{quiz.key}/uploads/{upload.pk}/progress/")
    body = poll.json()
    assert (body["problem_count"], len(body["problems"])) == (5_000, 1_000)
    assert len(poll.content) < 150_000, len(poll.content)
    page = client.get(sent["Location"]).content.decode()
    assert "Preview of answers.csv: 1 students, 2 answers" in page
    assert page.count("no student of this course with email ghost") == 200
    assert "… and 4,800 more problems, not listed here: the first 200 are." in page
    assert Answer.objects.count() == 0


def test_a_participation_file_of_300_events_lists_200_and_says_how_many_more() -> None:
    from apps.participation import services as participation
    from apps.participation.models import ParticipationEvent

    course = CourseFactory()
    ta_user = member(course, Role.TA)
    student = member(course, Role.STUDENT)
    rows = "".join(
        f"{student.email},ed-post,2026-02-{1 + i % 28:02d},post {i}\n" for i in range(300)
    )
    record, plan = participation.import_upload(
        actor=ta_user,
        course=course,
        filename="p.csv",
        data=("email,kind,date,note\n" + rows).encode(),
    )
    assert len(plan.events) == 300 and not plan.problems  # noqa: PT018
    ta = as_user(ta_user)
    url = f"/c/{course.code}/participation/imports/{record.pk}/"
    html = ta.get(url).content.decode()
    assert "300 events to add" in html
    assert html.count("<td>post ") == 200
    assert "… and 100 more events, not listed here: the first 200 are." in html
    ta.post(url)
    assert ParticipationEvent.objects.filter(course=course).count() == 300


# h70a: the similarity upload (apps.integrity) fuzzed through its form: random bytes, mangled
# zips and hostile names answer with a page and a reason, never a server error, and a refused
# upload stores nothing.
def test_the_similarity_upload_answers_junk_with_a_reason_and_stores_nothing() -> None:
    import io
    import random
    import zipfile

    from apps.integrity.models import SimilarityCheck, SubmittedFile

    course = CourseFactory()
    ta = Client(raise_request_exception=False)
    ta.force_login(member(course, Role.TA))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("Alpha/a.py", "def f(x):\n    return x + 1\n" * 40)
        z.writestr("Bravo/b.py", "def g(y):\n    return y * 2\n" * 40)
    good = buf.getvalue()
    rng = random.Random(70)
    junk = [b"", b"PK", b"PK\x03\x04" + bytes(200), rng.randbytes(5000), good[: len(good) // 2]]
    for _ in range(40):
        at = rng.randrange(len(good))
        junk.append(good[:at] + rng.randbytes(rng.randint(1, 16)) + good[at + 16 :])
    for i, data in enumerate(junk):
        sent = ta.post(
            f"/c/{course.code}/integrity/upload/",
            {"title": f"fuzz {i}", "threshold": "50", "archive": SimpleUploadedFile("x.zip", data)},
        )
        assert sent.status_code == 302, (i, sent.status_code)
        page = ta.get(sent["Location"]).content.decode()
        assert "error" in page or "Nothing was stored" in page or "This field" in page, i
    assert SimilarityCheck.objects.count() == 0  # no group of this course: nothing kept
    assert SubmittedFile.objects.count() == 0


def _zip_of(files: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in files.items():
            z.writestr(name, body)
    return buf.getvalue()


def _nested_bomb() -> bytes:
    """20 group zips, each real code beside 4 MiB of zeros in 1 MiB members (at the per-member
    ratio floor): ~90 KB uploaded, 80 MiB inside. Before #70's fix each inner zip had a limit of
    its own, and these groups' code was stored."""
    return _zip_of(
        {
            f"G{i:02d}.zip": _zip_of(
                {
                    "train.py": f"def f{i}(x):\n    return x + {i}\n".encode() * 20,
                    **{f"blob{j}.bin": bytes(1024 * 1024) for j in range(4)},
                }
            )
            for i in range(20)
        }
    )


def _alias_bomb() -> bytes:
    """Gradescope's metadata file, 6 levels of YAML aliases: a few hundred bytes that expand to
    18 M characters once the submitter's name is made a string (#70)."""
    levels = ['a0: &a0 ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]']
    for n in range(1, 7):
        prev = f"*a{n - 1}"
        levels.append(f"a{n}: &a{n} [{', '.join([prev] * 9)}]")
    meta = "\n".join(levels) + "\nsubmission_1:\n  :submitters:\n  - :name: *a6\n"
    meta += "    :email: a@uni.edu\n"
    return _zip_of(
        {
            "submission_metadata.yml": meta.encode(),
            "submission_1/a.py": b"def f(x):\n    return x\n" * 20,
            "submission_2/b.py": b"def g(y):\n    return y\n" * 20,
        }
    )


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_nested_bomb, "The submissions archive › G"),
        (_alias_bomb, "the metadata file uses YAML aliases, which a Gradescope export never does"),
    ],
    ids=["zip-of-zips-bomb", "yaml-alias-bomb"],
)
def test_a_hostile_similarity_upload_is_refused_by_name_and_stores_nothing(make, said) -> None:  # type: ignore[no-untyped-def]
    from apps.integrity.models import SimilarityCheck, SubmittedFile
    from tests.factories import GroupFactory, GroupMembershipFactory

    course = CourseFactory()
    for i in range(20):
        g = GroupFactory(course=course, name=f"G{i:02d}")
        GroupMembershipFactory(group=g, user=member(course, email=f"g{i}@uni.edu"))
    ta = as_user(member(course, Role.TA))
    sent = ta.post(
        f"/c/{course.code}/integrity/upload/",
        {"title": "hostile", "threshold": "50", "archive": SimpleUploadedFile("x.zip", make())},
    )
    assert sent.status_code == 302, sent.status_code
    page = ta.get(sent["Location"]).content.decode()
    assert said in page
    assert "Nothing was stored." in page
    assert SimilarityCheck.objects.count() == 0
    assert SubmittedFile.objects.count() == 0
