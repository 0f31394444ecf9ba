from django.urls import path

from apps.participation import views

app_name = "participation"
urlpatterns = [
    path("c/<slug:code>/participation/", views.page, name="page"),
    path(
        "c/<slug:code>/participation/imports/<int:import_id>/",
        views.import_preview,
        name="import-preview",
    ),
]
