"""One course, one term, driven at random: the services in any order, every invariant after
every step (`apps.core.invariants`, the checks `check_course` runs).

A Hypothesis state machine on PostgreSQL creates, moves, merges and dissolves groups; drops
students; allocates and releases nodes; requests, approves and cancels sharing windows; books
and cancels checkoffs; spends and cancels slack days; runs similarity checks over the live
groups' code (a copied pair among them) and then changes those groups; grades, re-grades, releases and hides an
assignment's question set; scores groups (impact, a staff-entered component). A refusal (a
DomainError) is a legal outcome of a step; an invariant violation is not. Each example builds
its own course, so the examples do not see each other's rows.

Besides `check_course`, the machine keeps its own record of every group score it gave and who
was in the group at that moment (read when it was given, not from history): each student's
impact and entered group score must be the latest given to a group while they were in it, or
else their current group's; and no student's gradebook may show the set before it is released.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import os

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.intake import answers_import
from apps.autograder.passes import grade_pass_chunk, pass_start, release, run_create
from apps.checkoffs import services as checkoffs
from apps.compute.board import services as compute
from apps.compute.board import windows
from apps.compute.models import Allocation, SharingWindow
from apps.core.errors import DomainError
from apps.core.invariants import run_checks
from apps.core.models import GradingComponent, Membership, Role
from apps.gradebook import services as gradebook
from apps.gradebook import sources
from apps.gradebook.selectors import gradebook_rows
from apps.groups import services as groups
from apps.groups.models import Group, GroupMembership
from apps.impact.services import group_score
from apps.integrity import services as integrity
from apps.integrity.models import SimilarityPair
from apps.slackdays import services as slack
from tests.autograder.test_grading import quiz_csv
from tests.factories import AssignmentFactory, CourseFactory, compute_inventory, member
from tests.integrity import planted
from tests.integrity.test_similarity import zip_of

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]
SERIAL = itertools.count()
RAN = {"steps": 0, "paired_changed": 0}  # random steps run; paired groups merged or dissolved
STEPS = settings(
    max_examples=20,
    stateful_step_count=25,  # at most 20 × 25 = 500 steps; at least 250 are asserted
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class Term(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.course = CourseFactory(code=f"term-{next(SERIAL)}")
        self.staff = member(self.course, Role.INSTRUCTOR)
        self.students = [member(self.course) for _ in range(14)]
        compute_inventory(self.course, 4)
        self.assignment = AssignmentFactory(
            course=self.course, code="A3", due_at=timezone.now() + dt.timedelta(days=5)
        )
        s = checkoffs.set_create(
            actor=self.staff,
            course=self.course,
            kind="assignment",
            assignment_id=self.assignment.pk,
        )
        start = timezone.now() + dt.timedelta(days=2)
        plans = [
            checkoffs.single_plan(
                course=self.course,
                starts_at=start + dt.timedelta(minutes=15 * i),
                ends_at=start + dt.timedelta(minutes=15 * (i + 1)),
                location="Cory 258",
                capacity=2,
                staff_id=None,
            )[0]
            for i in range(3)
        ]
        self.slots = [
            x.pk
            for x in checkoffs.slots_create(
                actor=self.staff, course=self.course, set_id=s.pk, plans=plans
            )
        ]
        checkoffs.set_publish(actor=self.staff, course=self.course, set_id=s.pk, published=True)
        self.names = itertools.count()
        # Grading: the quiz as A3's question set, everyone's answers in; three components.
        self.qs = bank_load(course=self.course, path=BANKS / "mlsysim-quiz.yaml")
        self.qs.assignment = self.assignment
        self.qs.save()
        answers_import(
            actor=self.staff, question_set=self.qs, data=quiz_csv(self.students), commit=True
        )
        for key, weight, source in (("core", 50, "autograder"), ("impact", 20, "impact")):
            GradingComponent.objects.create(
                course=self.course, key=key, name=key, weight=weight, source=source
            )
        GradingComponent.objects.create(
            course=self.course, key="written", name="written", weight=30, source="manual"
        )
        self.given: dict[str, list[tuple[int, float | None, set[int]]]] = {
            "impact": [],
            "written": [],
        }
        # Two groups of four to start with, so that group scores reach people from step one.
        for n in range(2):
            self.create_group()
            for i in range(4 * n, 4 * n + 4):
                self.move_student(i, n)
        # A similarity check over them (the planted copy), so every example has pairs whose
        # groups the group steps then move, merge and dissolve.
        self.similarity_check(0, True)

    # ------------------------------------------------------------------ helpers

    def _live(self) -> list[Group]:
        return list(
            Group.objects.filter(course=self.course, dissolved_at__isnull=True).order_by("pk")
        )

    def _try(self, call, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        # A refusal is a legal outcome; the invariants checked after the step must still hold.
        with contextlib.suppress(DomainError):
            call(*args, **kwargs)

    def _grouped(self, i: int):  # type: ignore[no-untyped-def]
        """The i-th student who is active and in a group, or None."""
        ids = list(
            GroupMembership.objects.filter(
                course=self.course, left_at__isnull=True, group__dissolved_at__isnull=True
            )
            .order_by("user_id")
            .values_list("user_id", flat=True)
        )
        return next((u for u in self.students if ids and u.pk == ids[i % len(ids)]), None)

    # ------------------------------------------------------------------ groups

    @rule()
    def create_group(self) -> None:
        self._try(
            groups.group_staff_create,
            actor=self.staff,
            course=self.course,
            name=f"G{next(self.names)}",
        )

    @rule(i=st.integers(0, 13), j=st.integers(0, 5))
    def move_student(self, i: int, j: int) -> None:
        live = self._live()
        if live:
            self._try(
                groups.member_move,
                actor=self.staff,
                course=self.course,
                user_id=self.students[i].pk,
                group_id=live[j % len(live)].pk,
            )

    @rule(i=st.integers(0, 13))
    def remove_student(self, i: int) -> None:
        self._try(
            groups.member_remove, actor=self.staff, course=self.course, user_id=self.students[i].pk
        )

    @rule(a=st.integers(0, 5), b=st.integers(0, 5))
    def merge(self, a: int, b: int) -> None:
        live = self._live()
        if len(live) >= 2:
            self._try(
                groups.group_merge,
                actor=self.staff,
                course=self.course,
                source_id=live[a % len(live)].pk,
                target_id=live[b % len(live)].pk,
            )

    @rule(a=st.integers(0, 5))
    def dissolve(self, a: int) -> None:
        live = self._live()
        if live:
            self._try(
                groups.group_dissolve,
                actor=self.staff,
                course=self.course,
                group_id=live[a % len(live)].pk,
            )

    # ------------------------------------------------------------------ compute

    @rule(a=st.integers(0, 5))
    def allocate(self, a: int) -> None:
        live = self._live()
        if live:
            self._try(
                compute.allocation_create,
                actor=self.staff,
                course=self.course,
                group_id=live[a % len(live)].pk,
                override_reason="stateful test",
            )

    @rule(a=st.integers(0, 5))
    def release(self, a: int) -> None:
        held = list(
            Allocation.objects.filter(course=self.course, ended_at__isnull=True).order_by("pk")
        )
        if held:
            self._try(
                compute.allocation_release,
                actor=self.staff,
                course=self.course,
                allocation_id=held[a % len(held)].pk,
            )

    @rule(i=st.integers(0, 13), a=st.integers(0, 5), hours=st.integers(1, 40))
    def request_window(self, i: int, a: int, hours: int) -> None:
        student = self._grouped(i)
        held = list(
            Allocation.objects.filter(course=self.course, ended_at__isnull=True).order_by("pk")
        )
        if student is None or not held:
            return
        start = timezone.now() + dt.timedelta(hours=hours)
        self._try(
            windows.window_request,
            actor=student,
            course=self.course,
            node_ids=[held[a % len(held)].node_id],
            starts_at=start,
            ends_at=start + dt.timedelta(hours=3),
        )

    @rule(a=st.integers(0, 9), approve=st.booleans())
    def decide_window(self, a: int, approve: bool) -> None:
        open_ = list(
            SharingWindow.objects.filter(
                course=self.course, status__in=["requested", "approved"]
            ).order_by("pk")
        )
        if open_:
            w = open_[a % len(open_)]
            call = windows.window_approve if approve else windows.window_cancel
            self._try(call, actor=self.staff, course=self.course, window_id=w.pk)

    # ------------------------------------------------------------------ checkoffs, slack

    @rule(i=st.integers(0, 13), k=st.integers(0, 2), cancel=st.booleans())
    def booking(self, i: int, k: int, cancel: bool) -> None:
        student = self._grouped(i)
        if student is not None:
            call = checkoffs.cancel if cancel else checkoffs.book
            self._try(call, actor=student, course=self.course, slot_id=self.slots[k])

    @rule(i=st.integers(0, 13), cancel=st.booleans())
    def slack_day(self, i: int, cancel: bool) -> None:
        student = self._grouped(i)
        if student is not None:
            call = slack.slack_cancel if cancel else slack.slack_apply
            self._try(call, actor=student, course=self.course, assignment_id=self.assignment.pk)

    @rule(i=st.integers(0, 13))
    def drop_student(self, i: int) -> None:
        """A roster drop as the roster import does it: the membership ends and the event is
        published; the groups app takes the student out of their group (and tells the rest)."""
        from django.db import transaction

        from apps.core.lifecycle import StudentDropped, publish

        student = self.students[i]
        with transaction.atomic():
            Membership.objects.filter(course=self.course, user=student).update(is_active=False)
            publish(
                StudentDropped(
                    course=self.course, actor=self.staff, at=timezone.now(), user_id=student.pk
                )
            )

    # ------------------------------------------------------------------ similarity

    @rule(first=st.integers(0, 5), copied=st.booleans())
    def similarity_check(self, first: int, copied: bool) -> None:
        """Staff upload one folder per live group (up to four, from the `first`-th), the first
        two holding the planted copy when `copied`; the worker's part runs here. A pair then
        names groups that the group steps go on to move, merge and dissolve: the pairs stay
        with the groups as they were (apps/integrity/invariants.py), and `check_course` says so
        after every step."""
        live = self._live()
        picked = [live[(first + k) % len(live)] for k in range(min(4, len(live)))]
        texts = [
            planted.ORIGINAL,
            planted.RENAMED_COPY if copied else planted.INDEPENDENT_SKLEARN,
            planted.INDEPENDENT_TORCH,
            planted.STARTER,
        ]
        files = {f"{g.name}/train.py": t for g, t in zip(picked, texts, strict=False)}
        with contextlib.suppress(DomainError):
            made = integrity.similarity_upload(
                actor=self.staff,
                course=self.course,
                title=f"A3 code {next(self.names)}",
                data=zip_of(files),
                starter=zip_of({"starter/train.py": planted.STARTER}),
            )
            if not made.reused:
                assert integrity.similarity_run(made.check.pk) == "done"
            made.check.refresh_from_db()
            assert made.check.status == "done", made.check.note
            if copied:  # the copy is found, between the two groups it was planted in
                top = SimilarityPair.objects.filter(check_run=made.check).first()
                assert top is not None
                assert {top.group_a_id, top.group_b_id} == {picked[0].pk, picked[1].pk}

    @rule(a=st.integers(0, 9), merge=st.booleans(), into=st.integers(0, 5))
    def change_a_paired_group(self, a: int, merge: bool, into: int) -> None:
        """Take a group that some pair names, if it is still live, and merge it into another
        (dissolve it if the merge is refused, e.g. too large) or dissolve it: the step the
        similarity pairs must survive."""
        named = sorted(
            set(
                SimilarityPair.objects.filter(
                    check_run__course=self.course, group_a__dissolved_at__isnull=True
                ).values_list("group_a_id", flat=True)
            )
        )
        if not named:
            return
        gid = named[a % len(named)]
        pairs_before = SimilarityPair.objects.filter(check_run__course=self.course).count()
        live = [g for g in self._live() if g.pk != gid]
        if merge and live:
            self._try(
                groups.group_merge,
                actor=self.staff,
                course=self.course,
                source_id=gid,
                target_id=live[into % len(live)].pk,
            )
        if Group.objects.filter(pk=gid, dissolved_at__isnull=True).exists():  # or merge refused
            self._try(groups.group_dissolve, actor=self.staff, course=self.course, group_id=gid)
        # the pairs are history: none lost, none moved to the group the members went to
        if Group.objects.filter(pk=gid, dissolved_at__isnull=False).exists():
            RAN["paired_changed"] += 1
        assert SimilarityPair.objects.filter(check_run__course=self.course).count() == pairs_before

    # ------------------------------------------------------------------ grades

    @rule(then_release=st.booleans())
    def grade_now(self, then_release: bool) -> None:
        """A TA's "Grade now" (a re-grade when one is done), its chunks graded in this process;
        then, sometimes, "Release"."""
        with contextlib.suppress(DomainError):
            run = run_create(actor=self.staff, question_set=self.qs)
            newest = run.passes.order_by("-number").first()
            if newest is not None and newest.in_progress:
                for index in pass_start(newest.pk):
                    grade_pass_chunk(newest.pk, index)
        if then_release:
            self.release_results(True)

    @rule(show=st.booleans())
    def release_results(self, show: bool) -> None:
        self.qs.refresh_from_db()
        self._try(release, actor=self.staff, question_set=self.qs, released=show)

    def _members_now(self, group_id: int) -> set[int]:
        return set(
            GroupMembership.objects.filter(group_id=group_id, left_at__isnull=True).values_list(
                "user_id", flat=True
            )
        )

    def _gave(self, key: str, group_id: int, percent: int | None) -> None:
        """Record a score given; the same score given again changes nothing (nor does the app)."""
        before = [p for g, p, _ in self.given[key] if g == group_id]
        if (before[-1] if before else None) != percent:
            self.given[key].append((group_id, percent, self._members_now(group_id)))

    @rule(a=st.integers(0, 5), percent=st.one_of(st.none(), st.integers(0, 100)))
    def score_impact(self, a: int, percent: int | None) -> None:
        live = self._live()
        if live:
            g = live[a % len(live)].pk
            group_score(actor=self.staff, course=self.course, group_id=g, percent=percent)
            self._gave("impact", g, percent)

    @rule(a=st.integers(0, 5), percent=st.integers(0, 100))
    def score_written(self, a: int, percent: int) -> None:
        live = self._live()
        if live:
            g = live[a % len(live)].pk
            gradebook.scores_apply(
                actor=self.staff,
                course=self.course,
                changes=[
                    gradebook.score_change(
                        course=self.course, component_key="written", percent=percent, group_id=g
                    )
                ],
            )
            self._gave("written", g, percent)

    @rule(
        impact=st.booleans(),
        a=st.integers(0, 5),
        percent=st.integers(0, 100),
        i=st.integers(0, 5),
        b=st.integers(0, 5),
        merge=st.booleans(),
        then=st.one_of(st.none(), st.integers(0, 100)),
    )
    def score_then_move(
        self, impact: bool, a: int, percent: int, i: int, b: int, merge: bool, then: int | None
    ) -> None:
        """Score a group, then move one of its members to another group, or merge it into one;
        then, sometimes, score the group they went to."""
        live = self._live()
        if len(live) < 2:
            return
        source, target = live[a % len(live)], live[b % len(live)]
        if source.pk == target.pk:
            target = live[(a + 1) % len(live)]
        if impact:
            self.score_impact(a, percent)
        else:
            self.score_written(a, percent)
        members = sorted(self._members_now(source.pk))
        if merge:
            self._try(
                groups.group_merge,
                actor=self.staff,
                course=self.course,
                source_id=source.pk,
                target_id=target.pk,
            )
        elif members:
            self._try(
                groups.member_move,
                actor=self.staff,
                course=self.course,
                user_id=members[i % len(members)],
                group_id=target.pk,
            )
        if then is not None:
            at = next((n for n, g in enumerate(self._live()) if g.pk == target.pk), None)
            if at is not None:
                (self.score_impact if impact else self.score_written)(at, then)

    def _expected(self, key: str, student: int, now_in: int | None) -> float | None:
        """The latest score given to a group while the student was in it, else the current
        group's latest score (the record's own reading of the rule)."""
        held = [p for g, p, members in self.given[key] if student in members]
        if held:
            return held[-1]
        latest = [p for g, p, _ in self.given[key] if g == now_in]
        return latest[-1] if latest else None

    # ------------------------------------------------------------------ after every step

    @invariant()
    def group_scores_follow_history(self) -> None:
        rows = gradebook_rows(self.course)
        now_in = dict(
            GroupMembership.objects.filter(course=self.course, left_at__isnull=True).values_list(
                "user_id", "group_id"
            )
        )
        for r in rows:
            for key in ("impact", "written"):
                want = self._expected(key, r.student.pk, now_in.get(r.student.pk))
                got = r.cells[key].percent
                assert got == want, (key, r.student.email, got, want, r.cells[key])

    @invariant()
    def unreleased_results_reach_nobody(self) -> None:
        self.qs.refresh_from_db()
        shown = any(r.cells["core"].percent is not None for r in gradebook_rows(self.course))
        released = self.qs.released_at is not None and self.qs.released_at <= timezone.now()
        if not released:
            assert not shown
        else:
            graded = sources.autograder(self.course, None, {})
            assert shown == any(v.percent is not None for v in graded.values())

    @invariant()
    def every_invariant_holds(self) -> None:
        RAN["steps"] += 1  # after each step, and once before the first
        found = run_checks(self.course.pk)
        assert not found, "\n".join(f"{v.check}: {v.detail}" for v in found)


def test_a_random_term_keeps_every_invariant(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`STATEFUL_SWITCH_OFF=compute` takes compute's reaction to a dissolved group out first, to
    watch this test fail and print the steps that led there."""
    if os.environ.get("STATEFUL_SWITCH_OFF") == "compute":
        _switch_off_compute(monkeypatch)
    RAN["steps"] = -STEPS.max_examples  # the check before each example's first step
    RAN["paired_changed"] = 0
    run_state_machine_as_test(Term, settings=STEPS)
    assert RAN["steps"] >= 250, RAN
    assert RAN["paired_changed"] >= 3, RAN  # similarity pairs outlived their groups' changes
    note = f"{RAN['steps']} random steps, {RAN['paired_changed']} paired groups changed"
    print(f"\nstateful term: {note}")  # noqa: T201 - the closing note's numbers


def _switch_off_compute(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.board import lifecycle as compute_lifecycle
    from apps.core import lifecycle
    from apps.core.lifecycle import GroupDissolved

    kept = [
        h
        for h in lifecycle.subscribers(GroupDissolved)
        if h is not compute_lifecycle.on_group_dissolved
    ]
    monkeypatch.setitem(lifecycle._SUBSCRIBERS, GroupDissolved, kept)


def test_the_invariant_step_notices_a_reaction_switched_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With compute's reaction to a dissolved group taken out, the machine's own steps (make a
    group, fill it, give it a node, dissolve it) leave a node held by a dissolved group, and the
    check after the step names it."""
    _switch_off_compute(monkeypatch)
    term = Term()
    term.create_group()
    for i in range(4):
        term.move_student(i, 0)
    term.allocate(0)
    term.every_invariant_holds()
    term.dissolve(0)
    with pytest.raises(AssertionError, match="no dissolved group holds a node"):
        term.every_invariant_holds()
