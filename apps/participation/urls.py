from django.urls import path

from apps.participation import views

app_name = "participation"
urlpatterns = [
    path("c/<slug:code>/participation/", views.page, name="page"),
    path("c/<slug:code>/participation/record/", views.event_record, name="record"),
    path("c/<slug:code>/participation/import/", views.events_import, name="import"),
    path(
        "c/<slug:code>/participation/events/<int:event_id>/delete/",
        views.event_delete,
        name="event-delete",
    ),
    path(
        "c/<slug:code>/participation/imports/<int:import_id>/",
        views.import_preview,
        name="import-preview",
    ),
]
