from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from apps.core.models import AuditEvent, Course, GradingComponent, Membership, User


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
class MembershipAdmin(admin.ModelAdmin):
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
