from django.urls import path

from apps.participation import views, views_checkin

app_name = "participation"
CHECKIN = "c/<slug:code>/checkin/"
urlpatterns = [
    path(CHECKIN, views_checkin.page, name="checkin"),
    path(CHECKIN + "enter/", views_checkin.enter, name="checkin-enter"),
    path(CHECKIN + "open/", views_checkin.session_open, name="checkin-open"),
    path(
        CHECKIN + "sessions/<int:session_id>/close/",
        views_checkin.session_close,
        name="checkin-close",
    ),
    path(
        CHECKIN + "sessions/<int:session_id>/screen/",
        views_checkin.screen,
        name="checkin-screen",
    ),
    path(
        CHECKIN + "entries/<int:checkin_id>/remove/",
        views_checkin.entry_remove,
        name="checkin-remove",
    ),
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
