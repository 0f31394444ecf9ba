"""A contributed question from proposal to grade: checked before review, accepted by staff, then
graded like any bank question; under review it is its authors' alone."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.autograder.services import answer_submit, grade_students, instance_for
from apps.contributions import rules, services
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from tests.factories import CourseFactory, group_of, member

pytestmark = pytest.mark.django_db

NUMERIC = {
    "kind": "numeric",
    "unit": "s",
    "rel_tol": 0.02,
    "prompt": "Ring AllReduce (exact) of {gb} GB over {n} GPUs on 50 GB/s links, no latency. "
    "Seconds?",
    "params_text": "gb in 2..20 step 2\nn in {8, 16, 32}",
    "answer": "ring_allreduce(message_bytes=gb*1e9, n_gpus=n, bandwidth_bytes_per_s=50e9)",
}


CHECK = {k: v for k, v in NUMERIC.items() if k != "unit"}
DECLARED = {"ai_used": False}  # the integrity declaration every submission carries


def test_parameters_and_keys_are_checked_with_the_reason() -> None:
    spec, problems = rules.parse_params("n = 8\ngb in 2..20 step 2\nk in {1, 2, 4}\n# a comment")
    assert spec == {"n": 8, "gb": {"range": [2, 20], "step": 2}, "k": {"choice": [1, 2, 4]}}
    assert problems == []
    assert "line 1" in rules.parse_params("n == 8")[1][0]
    _, samples, problems = rules.check(**{**CHECK, "options": []})
    assert problems == {}
    assert len(samples) == 5
    assert all(s["key"] > 0 for s in samples)
    _, _, bad = rules.check(
        **{**CHECK, "answer": "ring_allreduce(message_bytes=gb*1e9, n_gpus=n)", "options": []}
    )
    assert "does not evaluate" in bad["answer"]
    _, _, bad = rules.check(**{**CHECK, "answer": "__import__('os').system('id')", "options": []})
    assert "answer" in bad
    _, _, bad = rules.check(
        **{**CHECK, "prompt": NUMERIC["prompt"] + " With {alpha}.", "options": []}
    )
    assert "{alpha}" in bad["prompt"]
    choice = rules.options_from_text(
        "*a) Memory bandwidth | \nb) Peak FLOPS | More FLOPS = faster\nc) Disk |"
    )
    _, _, bad = rules.check(
        kind="choice",
        prompt="What limits batch-1 decode of a 70B model?",
        params_text="",
        answer="",
        rel_tol=0.02,
        options=choice,
    )
    assert bad == {"options": "Name the misconception each wrong option reveals."}


def test_proposed_then_accepted_then_graded_like_any_bank_question() -> None:
    course = CourseFactory()
    staff = member(course, Role.TA)
    group = group_of(course, 4)
    author = group.memberships.first().user
    other = member(course)
    with pytest.raises(services.ProposalProblems) as refused:
        services.proposal_submit(
            actor=author, course=course, data={**NUMERIC, **DECLARED, "answer": "gb / 0"}
        )
    assert "answer" in refused.value.problems
    p = services.proposal_submit(
        actor=author, course=course, data={**NUMERIC, **DECLARED}, as_group=True
    )
    assert set(p.authors.values_list("pk", flat=True)) == set(
        group.memberships.values_list("user_id", flat=True)
    )
    # under review: the authors' alone
    client = APIClient()
    client.force_authenticate(other)
    assert client.get(f"/api/v1/courses/{course.code}/contributions/").json()["count"] == 0
    with pytest.raises(NotAllowed):
        services.proposal_review(actor=author, course=course, proposal_id=p.pk, decision="accept")
    with pytest.raises(DomainError, match="comment"):
        services.proposal_review(actor=staff, course=course, proposal_id=p.pk, decision="changes")
    services.proposal_review(
        actor=staff,
        course=course,
        proposal_id=p.pk,
        decision="changes",
        comment="Say 'exact form'.",
    )
    services.proposal_update(
        actor=author,
        course=course,
        proposal_id=p.pk,
        data={
            **NUMERIC,
            **DECLARED,
            "prompt": NUMERIC["prompt"].replace("(exact)", "(exact form)"),
        },
    )
    p = services.proposal_review(actor=staff, course=course, proposal_id=p.pk, decision="accept")
    assert p.status == "accepted"
    with pytest.raises(Conflict):
        services.proposal_review(
            actor=staff, course=course, proposal_id=p.pk, decision="reject", comment="x"
        )
    assert (
        client.get(f"/api/v1/courses/{course.code}/contributions/").json()["results"][0]["question"]
        == f"contributed/c{p.pk}"
    )
    # graded like any bank question: per-student numbers, the key within 2 %
    q = p.question
    right, wrong = other, member(course)
    for student, factor in ((right, 1.01), (wrong, 1.5)):
        inst = instance_for(q, student)
        answer_submit(actor=student, question=q, answers={0: f"{inst.keys[0] * factor} s"})
    scores = {
        r["student_id"]: r["fraction"] for r in grade_students(q.question_set, [right.pk, wrong.pk])
    }
    assert scores == {right.pk: 1.0, wrong.pk: 0.0}


def test_the_pages_check_propose_edit_and_review_each_through_their_own_action() -> None:
    """As a student would: check the key (nothing saved), propose with a broken key (the problem
    shown on the form, nothing saved), propose, edit; then staff send it back with a comment."""
    from django.test import Client

    from apps.contributions.models import QuestionProposal

    course = CourseFactory()
    staff = member(course, Role.TA)
    author = group_of(course, 4).memberships.first().user
    student, ta = Client(), Client()
    student.force_login(author)
    ta.force_login(staff)
    url = f"/c/{course.code}/contributions/"
    form = {
        **{k: v for k, v in NUMERIC.items() if k != "rel_tol"},
        "rel_tol_percent": "2",
        "ai_used": "no",
    }
    page = student.post(f"{url}check/", form).content.decode()
    assert "Check the key" in page
    assert QuestionProposal.objects.count() == 0
    page = student.post(f"{url}propose/", {**form, "answer": "gb / 0"}).content.decode()
    assert "answer" in page
    assert QuestionProposal.objects.count() == 0
    r = student.post(f"{url}propose/", form, follow=True)
    p = QuestionProposal.objects.get()
    assert f"Proposal #{p.pk} sent to the staff." in r.content.decode()
    r = student.post(f"{url}{p.pk}/edit/", {**form, "unit": "ms"}, follow=True)
    assert "Saved; it waits for review again." in r.content.decode()
    r = ta.post(
        f"{url}{p.pk}/review/",
        {"decision": "changes", "comment": "Name the unit in the prompt.", "back": "status="},
        follow=True,
    )
    assert f"Proposal #{p.pk}: changes requested." in r.content.decode()
    p.refresh_from_db()
    assert p.status == "changes"
    assert ta.post(f"{url}check/", form).status_code == 403
    assert student.post(f"{url}{p.pk}/review/", {"decision": "accept"}).status_code == 403


def test_the_accepted_list_pages_and_my_proposals_are_only_mine() -> None:
    """Accepted contributions grow with the course: 20 a page, counted; mine stay mine."""
    from django.test import Client

    from apps.contributions.models import QuestionProposal

    course = CourseFactory()
    me, other = member(course, Role.STUDENT), member(course, Role.STUDENT)
    for n in range(23):
        p = QuestionProposal.objects.create(
            course=course, proposer=other, kind="numeric", prompt=f"Accepted prompt {n:02d}?"
        )
        p.authors.add(other)
        QuestionProposal.objects.filter(pk=p.pk).update(status="accepted")
    mine = QuestionProposal.objects.create(
        course=course, proposer=me, kind="numeric", prompt="My own draft?"
    )
    mine.authors.add(me)
    c = Client()
    c.force_login(me)
    url = f"/c/{course.code}/contributions/"
    first = c.get(url).content.decode()
    assert "Accepted contributions (23)" in first
    assert first.count("Accepted prompt") == 20 and "page 1 of 2" in first  # noqa: PT018
    assert "My own draft?" in first
    mine_section = first.split("<h2>My proposals</h2>")[1].split("<h2>Accepted")[0]
    assert "Accepted prompt" not in mine_section
    second = c.get(url + "?page=2").content.decode()
    assert second.count("Accepted prompt") == 3
