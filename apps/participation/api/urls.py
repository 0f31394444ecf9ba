from django.urls import path

from apps.participation.api import views as v

app_name = "participation-api"
P = "courses/<slug:code>/participation/"
urlpatterns = [
    path(P + "events/", v.EventsView.as_view(), name="events"),
    path(P + "events/<int:event_id>/", v.EventView.as_view(), name="event"),
    path(P + "summary/", v.SummaryView.as_view(), name="summary"),
    path(P + "checkin/", v.CheckinView.as_view(), name="checkin"),
    path(P + "imports/", v.ImportsView.as_view(), name="imports"),
    path(P + "imports/<int:import_id>/", v.ImportView.as_view(), name="import"),
    path(P + "imports/<int:import_id>/commit/", v.ImportCommitView.as_view(), name="import-commit"),
]
