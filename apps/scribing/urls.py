from django.urls import path

from apps.scribing import views

app_name = "scribing"
S = "c/<slug:code>/scribing/"
urlpatterns = [
    path(S, views.page, name="page"),
    # students
    path(f"{S}preferences/", views.preferences_save, name="preferences-save"),
    path(f"{S}duties/<int:duty_id>/submit/", views.duty_submit, name="duty-submit"),
    path(f"{S}duties/<int:duty_id>/swap/", views.swap_propose, name="swap-propose"),
    path(f"{S}swaps/<int:swap_id>/accept/", views.swap_accept, name="swap-accept"),
    path(f"{S}swaps/<int:swap_id>/decline/", views.swap_decline, name="swap-decline"),
    path(f"{S}swaps/<int:swap_id>/cancel/", views.swap_cancel, name="swap-cancel"),
    # staff
    path(f"{S}plan/", views.plan_save, name="plan-save"),
    path(f"{S}lectures/", views.lectures_save, name="lectures-save"),
    path(f"{S}solve/", views.solve, name="solve"),
    path(f"{S}proposal/move/", views.proposal_move, name="proposal-move"),
    path(f"{S}publish/", views.publish, name="publish"),
    path(f"{S}duties/<int:duty_id>/accept/", views.duty_accept, name="duty-accept"),
    path(f"{S}duties/<int:duty_id>/revise/", views.duty_revise, name="duty-revise"),
    path(f"{S}duties/<int:duty_id>/release/", views.duty_release, name="duty-release"),
    path(f"{S}swaps/<int:swap_id>/revert/", views.swap_revert, name="swap-revert"),
]
