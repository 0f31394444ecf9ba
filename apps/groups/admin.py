from django.contrib import admin

from apps.groups.models import Group, GroupMembership


class GroupMembershipInline(admin.TabularInline):
    model = GroupMembership
    extra = 0
    autocomplete_fields = ("user",)
    fields = ("user", "course", "joined_at", "left_at")


@admin.register(Group)
class GroupAdmin(admin.ModelAdmin):
    list_display = ("name", "course", "join_code")
    list_filter = ("course",)
    search_fields = ("name",)
    inlines = (GroupMembershipInline,)
