from django.urls import path

from apps.milestones import views

app_name = "milestones"
urlpatterns = [
    path("c/<slug:code>/milestones/", views.page, name="page"),
    path("c/<slug:code>/milestones/export.csv", views.export, name="export"),
    path(
        "c/<slug:code>/calendar/milestones/<int:milestone_id>/edit/",
        views.milestone_edit,
        name="milestone-edit",
    ),
]
