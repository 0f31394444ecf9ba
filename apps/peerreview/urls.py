from django.urls import path

from apps.peerreview import views

app_name = "peerreview"
P = "c/<slug:code>/peer-review/"
R = f"{P}rounds/<int:round_id>/"
urlpatterns = [
    path(P, views.page, name="page"),
    path(f"{P}reviews/<int:pair_id>/save/", views.review_save, name="review-save"),
    path(f"{P}reviews/<int:pair_id>/submit/", views.review_submit, name="review-submit"),
    path(f"{P}rounds/create/", views.round_create, name="round-create"),
    path(f"{R}preview/", views.round_preview, name="round-preview"),
    path(f"{R}reroll/", views.round_reroll, name="round-reroll"),
    path(f"{R}avoid/", views.avoid_add, name="avoid-add"),
    path(f"{R}exclude/", views.group_exclude, name="exclude"),
    path(f"{R}swap/", views.proposal_swap, name="swap"),
    path(f"{R}publish/", views.round_publish, name="round-publish"),
]
