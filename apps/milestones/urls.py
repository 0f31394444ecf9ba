from django.urls import path

from apps.milestones import views

app_name = "milestones"
M = "c/<slug:code>/milestones/"
ONE = f"{M}<int:milestone_id>/"
urlpatterns = [
    path(M, views.page, name="page"),
    path(f"{ONE}submit/", views.milestone_submit, name="submit"),
    path(f"{ONE}sources/", views.milestone_sources, name="sources"),
    path(f"{M}extend/", views.milestone_extend, name="extend"),
    path(f"{M}excuse/", views.milestone_excuse, name="excuse"),
    path(f"{M}unexcuse/", views.milestone_unexcuse, name="unexcuse"),
    path(f"{M}export.csv", views.export, name="export"),
    path(
        "c/<slug:code>/calendar/milestones/<int:milestone_id>/edit/",
        views.milestone_edit,
        name="milestone-edit",
    ),
]
