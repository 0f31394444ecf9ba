from django.urls import path

from apps.slackdays import edit_views, views

app_name = "slackdays"
urlpatterns = [
    path("c/<slug:code>/slack/", views.mine, name="mine"),
    path("c/<slug:code>/slack/staff/", views.staff, name="staff"),
    path("c/<slug:code>/slack/import/", views.lateness_import, name="import"),
    path(
        "c/<slug:code>/slack/import/<int:import_id>/", views.lateness_import, name="import-preview"
    ),
    path(
        "c/<slug:code>/calendar/assignments/<int:assignment_id>/edit/",
        edit_views.assignment_edit,
        name="assignment-edit",
    ),
]
