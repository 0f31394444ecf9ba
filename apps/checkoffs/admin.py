from django.contrib import admin

from apps.checkoffs.models import Booking, CheckoffSet, CheckoffSlot


@admin.register(CheckoffSet)
class CheckoffSetAdmin(admin.ModelAdmin):
    list_display = ("title", "course", "kind", "published_at", "book_by")
    list_filter = ("course", "kind")


@admin.register(CheckoffSlot)
class CheckoffSlotAdmin(admin.ModelAdmin):
    list_display = ("set", "starts_at", "location", "capacity", "booked", "staff")
    list_filter = ("set__course", "set")
    readonly_fields = ("booked",)


@admin.register(Booking)
class BookingAdmin(admin.ModelAdmin):
    list_display = ("group", "set", "slot", "attendance", "outcome", "cancelled_at")
    list_filter = ("set__course", "set", "outcome")
    readonly_fields = ("set", "slot", "group", "booked_by", "cancelled_at", "cancelled_by")
