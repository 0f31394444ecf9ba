"""Impact evidence page: a group records its evidence until the impact update closes; staff see
every group's evidence (paged, searchable), score items and each group, and export it."""

from __future__ import annotations

import itertools
from collections import defaultdict

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.core import integrity
from apps.core.csvexport import csv_response
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.integrity import DeclarationFormMixin
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.views_helpers import (
    course_action,
    course_for,
    errors_as_messages,
    redirect_with_back_query,
)
from apps.groups.models import Group
from apps.groups.selectors import group_for_student
from apps.impact import selectors, services
from apps.impact.models import KINDS, GroupImpact, ImpactItem

PAGE = 25


class ItemForm(DeclarationFormMixin):
    kind = forms.ChoiceField(choices=KINDS, help_text="What the evidence is.")
    url = forms.CharField(
        max_length=500,
        label="Link",
        help_text="https://… — where anyone can see it. The server never opens it.",
    )
    happened_on = forms.DateField(
        label="Date",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="When it was merged, released or posted.",
    )
    claim = forms.CharField(
        max_length=300, help_text="One sentence: what it shows about your project."
    )


@login_required
@require_GET
def page(request: AuthedRequest, code: str) -> HttpResponseBase:
    """A group's evidence of impact with the form to add more; staff score items and groups
    (CSV with ?format=csv). Every change posts to its own action view below."""
    course = course_for(request, code)
    if is_staff(request.user, course):
        return _staff(request, course)
    return _student(request, course, ItemForm())


def _student(request: AuthedRequest, course: Course, form: ItemForm) -> HttpResponseBase:
    group = group_for_student(user=request.user, course=course)
    items = list(selectors.item_list(user=request.user, course=course))
    score = GroupImpact.objects.filter(group=group).first() if group else None
    closes = services.closes_at(course)
    return render(
        request,
        "impact/student.html",
        {
            "course": course,
            "group": group,
            "items": items,
            "form": form,
            "score": score,
            "closes": closes,
            "now": timezone.now(),
        },
    )


@course_action(student=True)
def item_add(request: AuthedRequest, course: Course) -> HttpResponseBase:
    """A member records a piece of evidence (a merged PR, a release, a post) for the group."""
    form = ItemForm(request.POST)
    if not form.is_valid():
        return _student(request, course, form)
    d = form.cleaned_data
    try:
        services.item_add(
            actor=request.user,
            course=course,
            kind=d["kind"],
            url=d["url"],
            happened_on=d["happened_on"],
            claim=d["claim"],
            ai_used=d["ai_used"],
            ai_description=d["ai_description"],
        )
    except DomainError as exc:
        if exc.field in form.fields:
            form.add_error(exc.field, exc.message)
        else:
            messages.error(request, exc.message)
        return _student(request, course, form)
    messages.success(request, "Evidence recorded for your group.")
    return redirect("impact:page", code=course.code)


@course_action(student=True)
def item_remove(request: AuthedRequest, course: Course, item_id: int) -> HttpResponseBase:
    """A member removes one of the group's evidence items before the update closes."""
    with errors_as_messages(request):
        services.item_remove(actor=request.user, course=course, item_id=item_id)
        messages.success(request, "Removed.")
    return redirect("impact:page", code=course.code)


def _back_to_board(request: AuthedRequest, course: Course) -> HttpResponseBase:
    return redirect_with_back_query(request, reverse("impact:page", kwargs={"code": course.code}))


@course_action(staff=True)
def item_score(request: AuthedRequest, course: Course, item_id: int) -> HttpResponseBase:
    """Staff score one evidence item (0–100) with a note."""
    with errors_as_messages(request):
        services.item_score(
            actor=request.user,
            course=course,
            item_id=item_id,
            score=request.POST.get("score"),
            note=request.POST.get("note", ""),
        )
        messages.success(request, "Saved.")
    return _back_to_board(request, course)


@course_action(staff=True)
def group_score(request: AuthedRequest, course: Course, group_id: int) -> HttpResponseBase:
    """Staff set a group's impact percentage with a note."""
    with errors_as_messages(request):
        services.group_score(
            actor=request.user,
            course=course,
            group_id=group_id,
            percent=request.POST.get("percent"),
            note=request.POST.get("note", ""),
        )
        messages.success(request, "Saved.")
    return _back_to_board(request, course)


def _staff(request: AuthedRequest, course: Course) -> HttpResponseBase:
    q = request.GET.get("q", "").strip()
    groups = Group.objects.filter(course=course, dissolved_at__isnull=True).order_by("name")
    if q:
        groups = groups.filter(
            Q(name__icontains=q) | Q(impact_items__claim__icontains=q)
        ).distinct()
    if request.GET.get("format") == "csv":
        rows = (
            ImpactItem.objects.filter(course=course, group__in=groups)
            .select_related("group")
            .order_by("group__name", "happened_on")
            .iterator(chunk_size=500)
        )
        return csv_response(
            f"{course.code}-impact.csv",
            itertools.chain(
                [
                    [
                        "group",
                        "kind",
                        "url",
                        "date",
                        "claim",
                        "item score",
                        "staff note",
                        *integrity.EXPORT_HEADER,
                    ]
                ],
                (
                    [
                        i.group.name,
                        i.kind,
                        i.url,
                        i.happened_on.isoformat(),
                        i.claim,
                        "" if i.score is None else i.score,
                        i.staff_note,
                        *integrity.export_cells(i),
                    ]
                    for i in rows
                ),
            ),
        )
    page_ = Paginator(groups, PAGE).get_page(request.GET.get("page"))
    items: dict[int, list[ImpactItem]] = defaultdict(list)
    for item in ImpactItem.objects.filter(group__in=list(page_)).select_related("added_by"):
        items[item.group_id].append(item)
    scores = {s.group_id: s for s in GroupImpact.objects.filter(group__in=list(page_))}
    counts = dict(
        ImpactItem.objects.filter(course=course)
        .values("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    return render(
        request,
        "impact/staff.html",
        {
            "course": course,
            "rows": [(g, items.get(g.pk, []), scores.get(g.pk)) for g in page_],
            "page": page_,
            "q": q,
            "kinds": [(label, counts.get(k, 0)) for k, label in KINDS],
            "closes": services.closes_at(course),
            "scored": GroupImpact.objects.filter(course=course).count(),
            "total": page_.paginator.count,
        },
    )
