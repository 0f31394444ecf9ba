from django.contrib import admin

from apps.peerreview.models import PeerAssignment, PeerReview, PeerRound


@admin.register(PeerRound)
class PeerRoundAdmin(admin.ModelAdmin):
    list_display = ("title", "course", "milestone", "due_at", "k", "published_at")
    exclude = ("proposal",)


@admin.register(PeerAssignment)
class PeerAssignmentAdmin(admin.ModelAdmin):
    list_display = ("round", "reviewer", "reviewee")
    list_filter = ("round",)


@admin.register(PeerReview)
class PeerReviewAdmin(admin.ModelAdmin):
    list_display = ("assignment", "status", "version", "updated_at")
    list_filter = ("status",)
