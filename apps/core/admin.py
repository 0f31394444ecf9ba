from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from apps.core.lifecycle import StaffRemoved, publish
from apps.core.models import STAFF_ROLES, AuditEvent, Course, GradingComponent, Membership, User


def _was(pks: list[Any]) -> dict[int, tuple[int, int, str, bool]]:
    """{membership id: (course id, user id, role, active)} as the database has them now."""
    rows = Membership.objects.filter(pk__in=[pk for pk in pks if pk]).values_list(
        "pk", "course_id", "user_id", "role", "is_active"
    )
    return {pk: (course_id, user_id, role, active) for pk, course_id, user_id, role, active in rows}


def _staff_left(
    request: HttpRequest, was: tuple[int, int, str, bool], now: Membership | None
) -> None:
    """Publish `StaffRemoved` when a staff membership `was` ended, lost its staff role, or moved
    to another person or course (`now`: the row as saved, None when deleted)."""
    course_id, user_id, role, active = was
    if not active or role not in STAFF_ROLES:
        return
    same = now is not None and (now.course_id, now.user_id) == (course_id, user_id)
    if same and now is not None and now.is_active and now.role in STAFF_ROLES:
        return
    left_as = now.role if same and now is not None and now.is_active else ""
    publish(
        StaffRemoved(
            course=Course.objects.get(pk=course_id),
            actor=request.user if isinstance(request.user, User) else None,
            at=timezone.now(),
            user_id=user_id,
            role=role,
            now=left_as,
        )
    )


class StaffAwareMembershipAdmin:
    """Admin edits of memberships tell the apps when a staff member leaves (`StaffRemoved`), in
    the edit's transaction, as the roster import does."""

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        with transaction.atomic():
            was = _was([obj.pk]).get(obj.pk) if change else None
            super().save_model(request, obj, form, change)  # type: ignore[misc]
            if was:
                _staff_left(request, was, obj)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        with transaction.atomic():
            was = _was([obj.pk]).get(obj.pk)
            if was:
                _staff_left(request, was, None)
            super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        with transaction.atomic():
            for was in _was(list(queryset.values_list("pk", flat=True))).values():
                _staff_left(request, was, None)
            super().delete_queryset(request, queryset)  # type: ignore[misc]


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ("email",)
    list_display = ("email", "full_name", "sid", "is_active", "is_demo", "is_staff")
    list_filter = ("is_active", "is_demo", "is_staff", "is_superuser")
    search_fields = ("email", "full_name", "sid")
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Person", {"fields": ("full_name", "sid", "is_demo")}),
        ("Access", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "full_name", "password1", "password2")}),
    )


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("code", "title", "term", "timezone")
    search_fields = ("code", "title")


@admin.register(Membership)
class MembershipAdmin(StaffAwareMembershipAdmin, admin.ModelAdmin):
    list_display = ("user", "course", "role", "is_active")
    list_filter = ("course", "role", "is_active")
    search_fields = ("user__email", "user__full_name", "user__sid")
    autocomplete_fields = ("user",)


@admin.register(GradingComponent)
class GradingComponentAdmin(admin.ModelAdmin):
    list_display = ("name", "course", "parent", "weight", "satisfactory_threshold")
    list_filter = ("course",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the trail is append-only."""

    list_display = ("created_at", "course", "actor", "action", "object_repr")
    list_filter = ("course", "action")
    search_fields = ("action", "object_repr", "actor__email")
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
