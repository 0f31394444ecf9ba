from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.forms import Form
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.core.csvexport import SafeWriter
from apps.core.errors import DomainError
from apps.core.http import AuthedRequest
from apps.core.lifecycle import GroupDissolved, consequences
from apps.core.models import Course
from apps.core.views_helpers import course_action, course_for, errors_as_messages
from apps.groups import rules, services
from apps.groups.forms import CreateGroupForm, JoinGroupForm, MergeForm, MoveForm, RenameGroupForm
from apps.groups.models import Group
from apps.groups.selectors import (
    current_members_prefetch,
    group_for_student,
    group_list,
    group_list_with_sizes,
    membership_history,
    size_of,
    students_without_group,
)


@dataclass(frozen=True)
class BoardRow:
    group: Group
    size: int
    status: str  # under | ok | full


def _my_group_page(
    request: AuthedRequest, course: Course, bound: dict[str, Form] | None = None
) -> HttpResponse:
    """The student's group page; `bound` holds a submitted form to show with its errors."""
    forms: dict[str, Form] = {
        "create": CreateGroupForm(prefix="create"),
        "join": JoinGroupForm(prefix="join"),
        "rename": RenameGroupForm(prefix="rename"),
        **(bound or {}),
    }
    deadline = services.formation_deadline(course)
    return render(
        request,
        "groups/my_group.html",
        {
            "course": course,
            "group": group_for_student(course=course, user=request.user),
            "deadline": deadline,
            "is_open": rules.formation_open(now=timezone.now(), deadline=deadline),
            "forms": forms,
        },
    )


@login_required
@require_GET
def my_group(request: AuthedRequest, code: str) -> HttpResponse:
    """A student's group: members, join code; create, join, leave and rename post below."""
    return _my_group_page(request, course_for(request, code))


def _refused(
    request: AuthedRequest, course: Course, name: str, form: Form, exc: DomainError
) -> HttpResponse:
    """A refusal about one field goes on that field; anything else becomes the page's message."""
    if exc.field and exc.field in form.fields:
        form.add_error(exc.field, exc.message)
    else:
        messages.error(request, exc.message)
    return _my_group_page(request, course, {name: form})


@course_action(student=True)
def group_create(request: AuthedRequest, course: Course) -> HttpResponse:
    """A student creates a group (until the formation deadline) and gets its join code."""
    form = CreateGroupForm(request.POST, prefix="create")
    if not form.is_valid():
        return _my_group_page(request, course, {"create": form})
    try:
        g = services.group_create(actor=request.user, course=course, name=form.cleaned_data["name"])
    except DomainError as exc:
        return _refused(request, course, "create", form, exc)
    messages.success(
        request, f"You created {g.name}. Share the join code {g.join_code} with your group."
    )
    return redirect("groups:mine", code=course.code)


@course_action(student=True)
def group_join(request: AuthedRequest, course: Course) -> HttpResponse:
    """A student joins a group with its join code (until the formation deadline)."""
    form = JoinGroupForm(request.POST, prefix="join")
    if not form.is_valid():
        return _my_group_page(request, course, {"join": form})
    try:
        g = services.group_join(actor=request.user, course=course, code=form.cleaned_data["code"])
    except DomainError as exc:
        return _refused(request, course, "join", form, exc)
    messages.success(request, f"You joined {g.name}.")
    return redirect("groups:mine", code=course.code)


@course_action(student=True)
def group_leave(request: AuthedRequest, course: Course) -> HttpResponse:
    """A student leaves their group (until the formation deadline)."""
    with errors_as_messages(request):
        g = services.group_leave(actor=request.user, course=course)
        messages.success(request, f"You left {g.name}.")
    return redirect("groups:mine", code=course.code)


@course_action(student=True)
def group_rename(request: AuthedRequest, course: Course) -> HttpResponse:
    """A member renames their group."""
    form = RenameGroupForm(request.POST, prefix="rename")
    mine = group_for_student(course=course, user=request.user)
    if mine is None:
        messages.error(request, "You are not in a group.")
        return redirect("groups:mine", code=course.code)
    if not form.is_valid():
        return _my_group_page(request, course, {"rename": form})
    try:
        g = services.group_rename(actor=request.user, group=mine, name=form.cleaned_data["name"])
    except DomainError as exc:
        return _refused(request, course, "rename", form, exc)
    messages.success(request, f"Your group is now called {g.name}.")
    return redirect("groups:mine", code=course.code)


BOARD_PAGE = 20  # group cards per page
UNGROUPED_PAGE = 50


@login_required
@require_GET
def board(request: AuthedRequest, code: str) -> HttpResponse:
    """The formation board, a page of groups at a time (search by group, member name or email;
    filter by size), the students without a group a page at a time, and counts over all."""
    course = course_for(request, code, staff=True)
    lo, hi = course.group_min_size, course.group_max_size
    sized = group_list_with_sizes(course=course)
    show = request.GET.get("show", "all")
    q = request.GET.get("q", "").strip()
    # `size` is an annotation; the filters are spelt as kwargs because the type stubs cannot see it.
    by_size = {
        "under": {"size__lt": lo},
        "full": {"size__gte": hi},
        "ok": {"size__gte": lo, "size__lt": hi},
    }
    shown = sized.filter(**by_size[show]) if show in by_size else sized
    if q:
        shown = shown.filter(
            Q(name__icontains=q)
            | Q(memberships__left_at__isnull=True, memberships__user__full_name__icontains=q)
            | Q(memberships__left_at__isnull=True, memberships__user__email__icontains=q)
        ).distinct()
    page = Paginator(shown.prefetch_related(current_members_prefetch()), BOARD_PAGE).get_page(
        request.GET.get("page")
    )
    rows = [
        BoardRow(g, size_of(g), rules.size_status(size=size_of(g), min_size=lo, max_size=hi))
        for g in page
    ]
    ungrouped = Paginator(students_without_group(course=course), UNGROUPED_PAGE).get_page(
        request.GET.get("upage")
    )
    names: list[tuple[str, int]] = list(sized.values_list("name", *["size"]))
    return render(
        request,
        "groups/board.html",
        {
            "course": course,
            "rows": rows,
            "page": page,
            "show": show,
            "q": q,
            "group_names": names,
            "show_choices": [
                ("all", "all"),
                ("under", "under minimum"),
                ("ok", "ok"),
                ("full", "full"),
            ],
            "ungrouped": ungrouped,
            "counts": {
                "groups": len(names),
                "under": sum(1 for _, n in names if n < lo),
                "full": sum(1 for _, n in names if n >= hi),
                "ungrouped": ungrouped.paginator.count,
            },
            "move_form": MoveForm(),
            "merge_form": MergeForm(),
            "create_form": CreateGroupForm(prefix="create"),
            "history": membership_history(course=course, limit=20),
            "deadline": services.formation_deadline(course),
        },
    )


def _groups_of(course: Course) -> list[Group]:
    return list(group_list_with_sizes(course=course).only("pk", "name"))


@course_action(staff=True)
def board_create(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff create an empty group (at any time)."""
    form = CreateGroupForm(request.POST, prefix="create")
    if not form.is_valid():
        messages.error(request, "Give the group a name.")
    else:
        with errors_as_messages(request):
            g = services.group_staff_create(
                actor=request.user, course=course, name=form.cleaned_data["name"]
            )
            messages.success(request, f"Created {g.name}.")
    return redirect("groups:board", code=course.code)


@course_action(staff=True)
def member_move(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff move a student into a group (out of any other); audited."""
    move = MoveForm(request.POST, groups=_groups_of(course))
    if not move.is_valid():
        messages.error(request, "Choose a student and a group.")
    else:
        with errors_as_messages(request):
            g = services.member_move(
                actor=request.user,
                course=course,
                user_id=move.cleaned_data["user"],
                group_id=move.cleaned_data["group"],
            )
            messages.success(request, f"Moved into {g.name}.")
    return redirect("groups:board", code=course.code)


@course_action(staff=True)
def member_remove(request: AuthedRequest, course: Course, user_id: int) -> HttpResponse:
    """Staff take a student out of their group; audited."""
    with errors_as_messages(request):
        services.member_remove(actor=request.user, course=course, user_id=user_id)
        messages.success(request, "The student is now without a group.")
    return redirect("groups:board", code=course.code)


@course_action(staff=True)
def group_merge(request: AuthedRequest, course: Course) -> HttpResponse:
    """Staff merge one group into another; the source is dissolved."""
    merge = MergeForm(request.POST, groups=_groups_of(course))
    if not merge.is_valid():
        messages.error(request, "Choose two groups to merge.")
    else:
        with errors_as_messages(request):
            g = services.group_merge(
                actor=request.user,
                course=course,
                source_id=merge.cleaned_data["source"],
                target_id=merge.cleaned_data["target"],
            )
            messages.success(request, f"Merged into {g.name}.")
    return redirect("groups:board", code=course.code)


@login_required
def dissolve(request: AuthedRequest, code: str, group_id: int) -> HttpResponse:
    """GET asks for confirmation; POST dissolves."""
    course = course_for(request, code, staff=True)
    group = (
        Group.objects.filter(course=course, pk=group_id, dissolved_at__isnull=True)
        .prefetch_related("memberships__user")
        .first()
    )
    if group is None:
        messages.error(request, "That group no longer exists.")
        return redirect("groups:board", code=code)
    if request.method == "POST":
        try:
            n = services.group_dissolve(actor=request.user, course=course, group_id=group.pk)
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(
                request, f"Dissolved {group.name}; {n} student(s) are now without a group."
            )
        return redirect("groups:board", code=code)
    members = [m for m in group.memberships.all() if m.left_at is None]
    return render(
        request,
        "groups/dissolve_confirm.html",
        {
            "course": course,
            "group": group,
            "members": members,
            "consequences": consequences(GroupDissolved, course, group.pk),
        },
    )


@login_required
def export(request: AuthedRequest, code: str) -> HttpResponse:
    course = course_for(request, code, staff=True)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{course.code}-groups.csv"'
    writer = SafeWriter(response)
    writer.writerow(["group", "size", "join_code", "name", "email", "sid", "joined_at"])
    for g in group_list(user=request.user, course=course):
        for m in g.current_members:  # type: ignore[attr-defined]
            writer.writerow(
                [
                    g.name,
                    size_of(g),
                    g.join_code,
                    m.user.full_name,
                    m.user.email,
                    m.user.sid,
                    m.joined_at.isoformat(),
                ]
            )
    for u in students_without_group(course=course):
        writer.writerow(["", 0, "", u.full_name, u.email, u.sid, ""])
    return response
