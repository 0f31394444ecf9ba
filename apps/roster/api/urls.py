from django.urls import path

from apps.roster.api import views

app_name = "roster-api"
urlpatterns = [
    path("courses/<slug:code>/roster/", views.RosterListView.as_view(), name="list"),
    path("courses/<slug:code>/roster/imports/", views.RosterUploadView.as_view(), name="upload"),
    path(
        "courses/<slug:code>/roster/imports/<int:import_id>/",
        views.RosterPreviewView.as_view(),
        name="preview",
    ),
    path(
        "courses/<slug:code>/roster/imports/<int:import_id>/commit/",
        views.RosterCommitView.as_view(),
        name="commit",
    ),
]
